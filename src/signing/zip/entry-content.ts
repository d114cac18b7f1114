// Entry content: raw stored bytes in bounded chunks, and inflated bytes with CRC-32, declared
// size and zip-bomb bounds enforced while streaming (no entry is ever held whole unless asked).
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { constants as zlibConstants, createInflateRaw, inflateRaw, inflateRawSync } from 'node:zlib';
import type { DataSource } from '../data-source.ts';
import { SigningError } from '../errors.ts';
import { crc32Noted } from './chunk-crc.ts';
import type { ZipEntry } from './entry.ts';
import { METHOD_STORED } from './format.ts';
import type { ZipLimits } from './limits.ts';

export const DEFAULT_CHUNK_SIZE = 1024 * 1024;
const INFLATE_CHUNK = 64 * 1024;
// Entries this small are inflated in one call (with zlib's output cap set to the declared size):
// a stream per entry costs more than the inflation itself for the thousands of small files in apps.
const ONE_SHOT_COMPRESSED = 256 * 1024;
const ONE_SHOT_UNCOMPRESSED = 1024 * 1024;
// Of those, entries up to this size inflate on the calling thread. zlib's callback API costs the
// caller ~250 µs of CPU per call (a Transform stream and a zlib handle built and torn down, a
// trip to libuv's pool and back), its sync API ~20 µs, and inflating 256 KiB takes ~250 µs: an
// app's thousands of small resources cost seconds of the signing thread's time the other way
// (bench/ipa.ts's 2,000 resources: 0.73 s of CPU to hash them all, 0.33 s inflated here).
// Larger ones still inflate on the pool, beside the caller's hashing.
const INLINE_UNCOMPRESSED = 256 * 1024;
const inflateRawAsync = promisify(inflateRaw);

/**
 * What reading an entry's content needs: where its bytes lie, how they are compressed and what
 * they must check out to. A ZipEntry is one; a thread given only these fields can read it too.
 */
export type EntryLocation = Pick<ZipEntry, 'name' | 'method' | 'crc32' | 'compressedSize' | 'uncompressedSize' | 'dataOffset' | 'unreadable'>;

/** The location of a readable entry (one read or one written) as plain data, to post to another thread. */
export function locationOf({ name, method, crc32, compressedSize, uncompressedSize, dataOffset }: Omit<EntryLocation, 'unreadable'>): EntryLocation {
  return { name, method, crc32, compressedSize, uncompressedSize, dataOffset, unreadable: null };
}

export async function* readRawChunks(source: DataSource, entry: EntryLocation, chunkSize = DEFAULT_CHUNK_SIZE): AsyncGenerator<Buffer> {
  // A discarded entry that was let through unreadable (ZipOpenOptions.discarded) stays unread.
  if (entry.unreadable !== null) throw entry.unreadable;
  const end = entry.dataOffset + entry.compressedSize;
  for (let pos = entry.dataOffset; pos < end; pos += chunkSize) {
    yield await source.read(pos, Math.min(chunkSize, end - pos));
  }
}

export function openRawStream(source: DataSource, entry: ZipEntry): Readable {
  return Readable.from(readRawChunks(source, entry), { objectMode: false });
}

/**
 * The entry's content, inflated, its size and CRC-32 checked at the end. `inflateChunk`: the size
 * of the reads and inflated chunks of a streamed deflated entry (64 KiB by default, which bounds
 * memory; a caller streaming one large file may ask for more and fewer trips to zlib).
 */
export async function* readContentChunks(source: DataSource, entry: EntryLocation, limits: ZipLimits, inflateChunk = INFLATE_CHUNK): AsyncGenerator<Buffer> {
  if (entry.unreadable !== null) throw entry.unreadable;
  // Built only for an error (thousands of entries are read per app).
  const quoted = (): string => JSON.stringify(entry.name);
  let produced = 0;
  let crc = 0;
  // APPNOTE 4.4.9: the declared uncompressed size is exact, and it already passed the ratio and
  // size limits at open, so capping output at it bounds every entry. (A running ratio check would
  // add nothing and would refuse honest files whose first part is far more compressible.)
  const account = (chunk: Buffer): void => {
    produced += chunk.length;
    if (produced > entry.uncompressedSize) {
      throw new SigningError(produced > limits.maxEntryUncompressedSize ? 'zip_bomb' : 'zip_invalid', `entry ${quoted()} inflates to more than its declared ${entry.uncompressedSize} bytes`, { details: { name: entry.name } });
    }
    crc = crc32Noted(chunk, crc);
  };

  if (entry.method === METHOD_STORED) {
    try {
      for await (const chunk of readRawChunks(source, entry)) {
        account(chunk);
        yield chunk;
      }
    } catch (error) {
      if (error instanceof RangeError) throw new SigningError('zip_invalid', `entry ${quoted()} data lies outside the file`, { cause: error });
      throw error;
    }
  } else if (entry.compressedSize <= ONE_SHOT_COMPRESSED && entry.uncompressedSize <= ONE_SHOT_UNCOMPRESSED) {
    let compressed: Buffer;
    try {
      compressed = await source.read(entry.dataOffset, entry.compressedSize);
    } catch (error) {
      if (error instanceof RangeError) throw new SigningError('zip_invalid', `entry ${quoted()} data lies outside the file`, { cause: error });
      throw error;
    }
    let output: Buffer;
    try {
      // One byte more than declared so that over-production is seen, not silently cut.
      // One output chunk of the declared size (+1): no concat (and one trip back from the pool).
      const oneChunk = { maxOutputLength: entry.uncompressedSize + 1, finishFlush: zlibConstants.Z_SYNC_FLUSH, chunkSize: Math.max(zlibConstants.Z_MIN_CHUNK, entry.uncompressedSize + 1) };
      output = entry.uncompressedSize <= INLINE_UNCOMPRESSED ? inflateRawSync(compressed, oneChunk) : await inflateRawAsync(compressed, oneChunk);
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new SigningError('zip_invalid', `entry ${quoted()} inflates to more than its declared ${entry.uncompressedSize} bytes`, { cause: error, details: { name: entry.name } });
      }
      throw new SigningError('zip_invalid', `entry ${quoted()} has corrupt deflate data: ${(error as Error).message}`, { cause: error, details: { name: entry.name } });
    }
    account(output);
    if (output.length > 0) yield output;
  } else {
    const raw = Readable.from(readRawChunks(source, entry, inflateChunk));
    // finishFlush SYNC: a truncated deflate stream is then reported by the size/CRC check below
    // with a zip error, rather than a bare zlib "unexpected end of file".
    const inflater = createInflateRaw({ chunkSize: inflateChunk, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    raw.on('error', (error) => inflater.destroy(error));
    raw.pipe(inflater);
    try {
      for await (const chunk of inflater as AsyncIterable<Buffer>) {
        account(chunk);
        yield chunk;
      }
    } catch (error) {
      if (error instanceof SigningError) throw error;
      if (error instanceof RangeError) throw new SigningError('zip_invalid', `entry ${quoted()} data lies outside the file`, { cause: error });
      throw new SigningError('zip_invalid', `entry ${quoted()} has corrupt deflate data: ${(error as Error).message}`, { cause: error, details: { name: entry.name } });
    } finally {
      raw.destroy();
      inflater.destroy();
    }
  }
  if (produced !== entry.uncompressedSize) {
    throw new SigningError('zip_invalid', `entry ${quoted()} inflates to ${produced} bytes, not the declared ${entry.uncompressedSize}`, { details: { name: entry.name } });
  }
  // APPNOTE 4.4.7: CRC-32 of the uncompressed data.
  if (crc >>> 0 !== entry.crc32) {
    throw new SigningError('zip_invalid', `entry ${quoted()} fails its CRC-32 check`, { details: { name: entry.name } });
  }
}

export function openContentStream(source: DataSource, entry: ZipEntry, limits: ZipLimits): Readable {
  return Readable.from(readContentChunks(source, entry, limits), { objectMode: false });
}

export async function readEntryBytes(source: DataSource, entry: ZipEntry, limits: ZipLimits, maxBytes: number): Promise<Buffer> {
  if (entry.unreadable !== null) throw entry.unreadable;
  if (entry.uncompressedSize > maxBytes) {
    throw new SigningError('zip_bomb', `entry ${JSON.stringify(entry.name)} is ${entry.uncompressedSize} bytes, more than the ${maxBytes} allowed here`, { details: { name: entry.name } });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of readContentChunks(source, entry, limits)) chunks.push(chunk);
  return Buffer.concat(chunks, entry.uncompressedSize);
}
