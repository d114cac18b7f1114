// Reads one Mach-O entry into a single buffer that starts at offset 0 of its own memory (so it
// can be transferred to a worker thread without a copy). A stored entry is one read; a deflated
// one is fed to zlib in 1 MiB reads and inflated into one allocation. The file is never held
// twice, which is what bounds memory for an 80 MiB executable. CRC-32 and size are checked as
// the zip reader would check them.
import { once } from 'node:events';
import { constants as zlibConstants, createInflateRaw, crc32 } from 'node:zlib';
import type { DataSource } from '../../data-source.ts';
import { SigningError } from '../../errors.ts';
import { METHOD_STORED, type ZipEntry, type ZipReader } from '../../zip/index.ts';

const STEP = 1024 * 1024;

export async function readMachO(zip: ZipReader, entry: ZipEntry): Promise<Buffer> {
  const out = entry.method === METHOD_STORED ? await readStored(zip.source, entry) : await inflateInto(zip.source, entry);
  // APPNOTE 4.4.7: the CRC-32 of the uncompressed data must match the central directory's.
  if (crc32(out) >>> 0 !== entry.crc32) throw new SigningError('zip_invalid', `entry ${JSON.stringify(entry.name)} fails its CRC-32 check`, { details: { name: entry.name } });
  return out;
}

async function readStored(source: DataSource, entry: ZipEntry): Promise<Buffer> {
  const bytes = await source.read(entry.dataOffset, entry.compressedSize);
  // A BufferSource hands out views of its buffer; the worker needs a buffer it may take away.
  return bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length ? bytes : Buffer.from(Uint8Array.prototype.slice.call(bytes).buffer);
}

async function inflateInto(source: DataSource, entry: ZipEntry): Promise<Buffer> {
  // With a chunk size above the file size, node:zlib inflates everything into one buffer and
  // emits views of it (a new buffer is only taken when one is full), so the file is allocated
  // once. Should the chunks ever not be views of one buffer, they are copied into a fresh one.
  // zlib refuses chunks under Z_MIN_CHUNK (64 bytes): a tiny (malformed) executable still gets one.
  const inflater = createInflateRaw({ chunkSize: Math.max(zlibConstants.Z_MIN_CHUNK, entry.uncompressedSize + 1) });
  const end = entry.dataOffset + entry.compressedSize;
  // Aborted once the output side stops (corrupt data, too much output): a destroyed inflater never
  // emits 'drain', and a feed waiting for it would keep this function from ever returning.
  const stop = new AbortController();
  const feed = (async () => {
    try {
      for (let pos = entry.dataOffset; pos < end; pos += STEP) {
        const raw = await source.read(pos, Math.min(STEP, end - pos));
        if (stop.signal.aborted) return;
        if (!inflater.write(raw)) await once(inflater, 'drain', { signal: stop.signal });
      }
      inflater.end();
    } catch (error) {
      if (!stop.signal.aborted) inflater.destroy(error as Error);
    }
  })();
  const chunks: Buffer[] = [];
  let produced = 0;
  try {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      produced += chunk.length;
      if (produced > entry.uncompressedSize) throw new SigningError('zip_invalid', `entry ${JSON.stringify(entry.name)} inflates past its declared ${entry.uncompressedSize} bytes`, { details: { name: entry.name } });
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof SigningError) throw error;
    throw new SigningError('zip_invalid', `entry ${JSON.stringify(entry.name)} has corrupt deflate data: ${(error as Error).message}`, { cause: error, details: { name: entry.name } });
  } finally {
    stop.abort();
    inflater.destroy();
    await feed;
  }
  if (produced !== entry.uncompressedSize) throw new SigningError('zip_invalid', `entry ${JSON.stringify(entry.name)} inflates to ${produced} bytes, not ${entry.uncompressedSize}`, { details: { name: entry.name } });
  return joined(chunks, produced);
}

/** The chunks as one buffer starting at offset 0 of its memory: the shared one, or a copy. */
function joined(chunks: readonly Buffer[], size: number): Buffer {
  const first = chunks[0];
  if (first === undefined) return Buffer.alloc(0);
  let at = first.byteOffset;
  const contiguous = first.byteOffset === 0 && chunks.every((c) => {
    const ok = c.buffer === first.buffer && c.byteOffset === at;
    at += c.length;
    return ok;
  });
  if (contiguous) return Buffer.from(first.buffer, 0, size);
  const out = Buffer.allocUnsafeSlow(size);
  let offset = 0;
  for (const chunk of chunks) offset += chunk.copy(out, offset);
  return out;
}
