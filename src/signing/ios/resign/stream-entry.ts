// A zip entry as input of the streaming Mach-O signer (codesign/sign-stream.ts): a few random
// reads for the header and the old signature, then one sequential pass with the next chunk
// already being read (or inflated) while the current one is hashed and written.
//
// A stored entry is read where it lies. A deflated one cannot be read at an offset without
// inflating what precedes it, so reaching the old signature (at the end of the file) costs one
// extra inflate pass, run on libuv's pool; memory stays bounded either way. Deflated entries are
// inflated here in 1 MiB steps rather than through the zip reader's 64 KiB stream: for an 80 MiB
// executable that is ~80 reads and zlib calls instead of ~1,300 (each a trip through the pool),
// with the same checks (declared size, CRC-32, corrupt data as zip_invalid).
import { once } from 'node:events';
import { constants as zlib, createInflateRaw } from 'node:zlib';
import { SigningError } from '../../errors.ts';
import { crc32Noted } from '../../zip/chunk-crc.ts';
import { METHOD_STORED, type ZipEntry, type ZipReader } from '../../zip/index.ts';
import type { MachOStreamInput } from '../codesign/sign-stream.ts';

const STEP = 1024 * 1024;

export function entryStreamInput(zip: ZipReader, entry: ZipEntry): MachOStreamInput {
  const size = entry.uncompressedSize;
  return {
    size,
    read: async (offset, length) => {
      if (offset < 0 || length < 0 || offset + length > size) throw new RangeError(`read [${offset}, +${length}) outside ${entry.name}`);
      if (entry.method === METHOD_STORED) return zip.source.read(entry.dataOffset + offset, length);
      return inflatedRange(zip, entry, offset, length);
    },
    // Stored: the zip reader's checked 1 MiB reads (CRC-32 and size verified at the end).
    chunks: () => prefetched(entry.method === METHOD_STORED ? zip.contentChunks(entry) : inflatedChunks(zip, entry)),
  };
}

async function inflatedRange(zip: ZipReader, entry: ZipEntry, offset: number, length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  let position = 0;
  let filled = 0;
  if (length === 0) return out;
  // Leaving the loop early ends the inflater (the generator's finally). No CRC-32 here: a range
  // ends before the entry's end, where the check is made (the signing pass reads every byte).
  for await (const chunk of inflatedChunks(zip, entry, false)) {
    const start = Math.max(offset, position);
    const end = Math.min(offset + length, position + chunk.length);
    if (end > start) filled += chunk.copy(out, start - offset, start - position, end - position);
    position += chunk.length;
    if (filled === length) return out;
  }
  throw new SigningError('zip_invalid', `entry ${JSON.stringify(entry.name)} ends before byte ${offset + length}`, { details: { name: entry.name } });
}

/** The inflated bytes of a deflated entry, checked like the zip reader checks them (the CRC-32 unless `checkCrc` is false). */
async function* inflatedChunks(zip: ZipReader, entry: ZipEntry, checkCrc = true): AsyncGenerator<Buffer> {
  const quoted = JSON.stringify(entry.name);
  // finishFlush SYNC: a truncated stream is then reported by the size/CRC checks below.
  const inflater = createInflateRaw({ chunkSize: Math.min(STEP, Math.max(64, entry.uncompressedSize)), finishFlush: zlib.Z_SYNC_FLUSH });
  const end = entry.dataOffset + entry.compressedSize;
  // Aborted when the consumer stops early, so a feed waiting for 'drain' does not wait forever.
  const stop = new AbortController();
  const feed = (async () => {
    try {
      for (let pos = entry.dataOffset; pos < end; pos += STEP) {
        const raw = await zip.source.read(pos, Math.min(STEP, end - pos));
        if (stop.signal.aborted) return;
        if (!inflater.write(raw)) await once(inflater, 'drain', { signal: stop.signal });
      }
      inflater.end();
    } catch (error) {
      inflater.destroy(error as Error);
    }
  })();
  let produced = 0;
  let crc = 0;
  try {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      produced += chunk.length;
      // APPNOTE 4.4.9: the declared size is exact (and passed the reader's bomb limits at open).
      if (produced > entry.uncompressedSize) throw new SigningError('zip_invalid', `entry ${quoted} inflates to more than its declared ${entry.uncompressedSize} bytes`, { details: { name: entry.name } });
      if (checkCrc) crc = crc32Noted(chunk, crc);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof SigningError) throw error;
    if (error instanceof RangeError) throw new SigningError('zip_invalid', `entry ${quoted} data lies outside the file`, { cause: error, details: { name: entry.name } });
    throw new SigningError('zip_invalid', `entry ${quoted} has corrupt deflate data: ${(error as Error).message}`, { cause: error, details: { name: entry.name } });
  } finally {
    stop.abort();
    inflater.destroy();
    await feed;
  }
  if (produced !== entry.uncompressedSize) throw new SigningError('zip_invalid', `entry ${quoted} inflates to ${produced} bytes, not the declared ${entry.uncompressedSize}`, { details: { name: entry.name } });
  // APPNOTE 4.4.7: CRC-32 of the uncompressed data.
  if (checkCrc && crc >>> 0 !== entry.crc32) throw new SigningError('zip_invalid', `entry ${quoted} fails its CRC-32 check`, { details: { name: entry.name } });
}

/** The same items, with the next one requested as soon as the current one is handed out. */
async function* prefetched<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = source.next();
  try {
    for (;;) {
      const item = await next;
      if (item.done === true) return;
      next = source.next();
      yield item.value;
    }
  } finally {
    // Stopped early (the consumer failed): let the pending request settle, then close the source.
    await next.catch(() => undefined);
    await source.return(undefined);
  }
}
