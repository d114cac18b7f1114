// Writing a new entry: stored or deflated (node:zlib, CRC via zlib.crc32), from a buffer or a
// stream. Buffers get exact headers up front; streams get their header patched in place once the
// CRC and sizes are known, or a data descriptor when the sink cannot overwrite.
import { once } from 'node:events';
import { promisify } from 'node:util';
import { crc32, createDeflateRaw, deflateRaw } from 'node:zlib';
import type { DataSink } from '../data-sink.ts';
import { SigningError } from '../errors.ts';
import { knownChunkCrc } from './chunk-crc.ts';
import { crc32Combine } from './crc32-combine.ts';
import { deflatePieces, storedBlocks, type DeflatePiecesOptions } from './deflate-pieces.ts';
import { alignedExtra, defaultAlignment, type AlignmentPolicy } from './alignment.ts';
import { DATA_DESCRIPTOR_SIGNATURE, FLAG_DATA_DESCRIPTOR, FLAG_UTF8, HOST_UNIX, LOCAL_HEADER_SIZE, METHOD_DEFLATED, METHOD_STORED, ZIP64_MARKER_32, dateToDos, writeU64 } from './format.ts';
import { buildCentralRecord, buildLocalHeader, needs64, VERSION_DEFAULT, VERSION_ZIP64, withZip64Field } from './headers.ts';
import type { ZipEntry } from './entry.ts';
import { externalAttributesForMode } from './unix-mode.ts';
import type { WrittenEntry } from './written-entry.ts';

const deflateRawAsync = promisify(deflateRaw);

export type NewEntryData = Buffer | AsyncIterable<Buffer>;

export interface NewEntryOptions {
  /**
   * An input entry this one replaces: its "version made by", external attributes (Unix mode,
   * symlink bit), DOS time and compression method become the defaults, so replacing a file's
   * content (a re-signed binary, an edited plist) keeps its metadata.
   */
  metadataFrom?: Pick<ZipEntry, 'versionMadeBy' | 'externalAttributes' | 'dosTime' | 'dosDate' | 'method'>;
  /** Default 'deflate' (or metadataFrom's method). Directories (names ending in "/") are always stored. */
  method?: 'stored' | 'deflate';
  /** zlib level 0-9 for 'deflate' (default 6). */
  level?: number;
  /** Unix st_mode (type + permissions); sets Unix as host in "version made by". */
  unixMode?: number;
  /** Raw external attributes; wins over unixMode. */
  externalAttributes?: number;
  /** Default: Unix 2.0 (0x0314) when unixMode/externalAttributes is given, else 0x0014 like apksig. */
  versionMadeBy?: number;
  /** Modification time (UTC); or exact DOS fields. Default 1980-01-01 00:00 for determinism. */
  mtime?: Date;
  dosTime?: number;
  dosDate?: number;
  /** Data alignment; default: 4 for stored entries, the page size for stored `.so`, none if deflated. */
  alignment?: number;
  /** Extra fields to put in both headers (already serialized), e.g. an extended timestamp. */
  extra?: Buffer;
  /** Write Zip64 fields even though the entry is small. */
  forceZip64?: boolean;
  /** Expected uncompressed size of a streamed entry: lets the header reserve Zip64 when needed. */
  size?: number;
  /**
   * A streamed deflated entry compressed in independent pieces over libuv's pool (deflate-pieces.ts)
   * instead of one zlib stream, at these options' level (`level` above is then unused).
   */
  pieces?: DeflatePiecesOptions;
  /** Already-deflated data (e.g. from a reference deflater for byte parity): give its CRC and size. */
  precompressed?: { crc32: number; uncompressedSize: number };
  /**
   * The streamed data's first `length` bytes are stand-ins, final only once the data has ended
   * (a re-signed Mach-O file's header records the size of the signature built last): written as
   * they come - stored, or as deflate stored blocks ahead of the `pieces` (deflate-pieces.ts) -
   * then replaced in place by `final()`'s bytes of the same length (DataSink.writeAt), the CRC-32
   * made up from theirs and the rest's (crc32-combine.ts).
   */
  provisionalHead?: { length: number; final: () => Buffer };
}

interface Context {
  allowZip64: boolean;
  policy: AlignmentPolicy;
}

// Deflate can expand incompressible input by a few bytes per 16 KiB block; stay clear of 4 GiB.
const ZIP64_STREAM_THRESHOLD = ZIP64_MARKER_32 - 16 * 1024 * 1024;

export async function writeNewEntry(sink: DataSink, name: string, data: NewEntryData, given: NewEntryOptions, context: Context): Promise<WrittenEntry> {
  const like = given.metadataFrom;
  const options: NewEntryOptions = like === undefined ? given : {
    method: like.method === METHOD_STORED ? 'stored' : 'deflate',
    versionMadeBy: like.versionMadeBy,
    externalAttributes: like.externalAttributes,
    ...(given.mtime === undefined ? { dosTime: like.dosTime, dosDate: like.dosDate } : {}),
    ...given,
  };
  const isDirectory = name.endsWith('/');
  const method = isDirectory || options.method === 'stored' ? METHOD_STORED : METHOD_DEFLATED;
  if (options.precompressed !== undefined && method !== METHOD_DEFLATED) throw new RangeError('precompressed data must use method deflate');
  const nameBytes = Buffer.from(name, 'utf8');
  // APPNOTE 4.4.10: the name length is a 16-bit field.
  if (nameBytes.length > 0xffff) throw new SigningError('zip_unsupported', `entry name of ${nameBytes.length} bytes exceeds the 65535-byte limit`);
  const dos = options.mtime !== undefined ? dateToDos(options.mtime) : { dosTime: options.dosTime ?? 0, dosDate: options.dosDate ?? 0x21 };
  const externalAttributes = options.externalAttributes ?? (options.unixMode !== undefined ? externalAttributesForMode(options.unixMode) : isDirectory ? 0x10 : 0);
  const unixHost = options.unixMode !== undefined || options.externalAttributes !== undefined;
  const versionMadeBy = options.versionMadeBy ?? (unixHost ? (HOST_UNIX << 8) | VERSION_DEFAULT : VERSION_DEFAULT);
  const alignment = options.alignment ?? defaultAlignment(name, method, context.policy);
  const userExtra = options.extra ?? Buffer.alloc(0);
  const offset = sink.position;

  // Known content: compress first, then write exact headers.
  let known: { crc: number; size: number; payload: Buffer } | null = null;
  if (Buffer.isBuffer(data)) {
    if (isDirectory && data.length > 0) throw new RangeError(`directory entry ${JSON.stringify(name)} must be empty`);
    if (options.precompressed !== undefined) {
      known = { crc: options.precompressed.crc32, size: options.precompressed.uncompressedSize, payload: data };
    } else {
      const payload = method === METHOD_DEFLATED ? await deflateRawAsync(data, { level: options.level ?? 6 }) : data;
      known = { crc: crc32(data), size: data.length, payload };
    }
  } else if (options.precompressed !== undefined) {
    throw new RangeError('precompressed data must be a Buffer');
  }

  const localZip64 = options.forceZip64 === true || (known !== null ? needs64(known.size) || needs64(known.payload.length) : (options.size ?? 0) >= ZIP64_STREAM_THRESHOLD);
  if ((localZip64 || needs64(offset)) && !context.allowZip64) throw new SigningError('zip_unsupported', `entry ${JSON.stringify(name)} needs Zip64, which is not allowed for this archive`);
  const canPatch = known === null && sink.writeAt !== undefined;
  const head = options.provisionalHead;
  if (head !== undefined && (known !== null || !canPatch || (method === METHOD_DEFLATED && options.pieces === undefined))) {
    throw new RangeError('a provisional head needs streamed data, a sink that can patch, and deflate pieces when deflated');
  }
  const descriptor = known === null && !canPatch;
  const flags = FLAG_UTF8 | (descriptor ? FLAG_DATA_DESCRIPTOR : 0);

  const baseLocalExtra = localZip64 ? withZip64Field(userExtra, [known?.size ?? 0, known?.payload.length ?? 0]) : userExtra;
  const localExtra = alignment > 1 ? alignedExtra(baseLocalExtra, offset + LOCAL_HEADER_SIZE + nameBytes.length, alignment) : baseLocalExtra;
  const versionNeeded = localZip64 ? VERSION_ZIP64 : VERSION_DEFAULT;
  const header = buildLocalHeader({
    versionNeeded, flags, method, ...dos,
    crc32: known?.crc ?? 0,
    compressedSize: localZip64 ? ZIP64_MARKER_32 : known?.payload.length ?? 0,
    uncompressedSize: localZip64 ? ZIP64_MARKER_32 : known?.size ?? 0,
    nameBytes, extra: localExtra,
  });
  await sink.write(header);
  const dataOffset = offset + header.length;

  let crc: number;
  let size: number;
  let compressedSize: number;
  if (known !== null) {
    await sink.write(known.payload);
    ({ crc, size } = known);
    compressedSize = known.payload.length;
  } else {
    const pieces = options.pieces === undefined ? undefined : { ...options.pieces, ...(head === undefined ? {} : { storedHead: head.length }) };
    ({ crc, size, compressedSize } = await streamBody(sink, data as AsyncIterable<Buffer>, method, options.level ?? 6, pieces, head?.length ?? 0));
    if (head !== undefined) crc = await replaceHead(sink, dataOffset, method, head, crc, size);
    if (isDirectory && size > 0) throw new RangeError(`directory entry ${JSON.stringify(name)} must be empty`);
    if (!localZip64 && (needs64(size) || needs64(compressedSize))) {
      throw new SigningError('zip_unsupported', `streamed entry ${JSON.stringify(name)} grew past 4 GiB; pass options.size so Zip64 can be reserved`);
    }
    if (canPatch) {
      const patch = Buffer.alloc(12);
      patch.writeUInt32LE(crc >>> 0, 0);
      patch.writeUInt32LE(localZip64 ? ZIP64_MARKER_32 : compressedSize, 4);
      patch.writeUInt32LE(localZip64 ? ZIP64_MARKER_32 : size, 8);
      await sink.writeAt!(offset + 14, patch);
      if (localZip64) {
        // The Zip64 field sits first in the extra (withZip64Field): usize then csize after its 4-byte header.
        const values = Buffer.alloc(16);
        writeU64(values, size, 0);
        writeU64(values, compressedSize, 8);
        await sink.writeAt!(offset + LOCAL_HEADER_SIZE + nameBytes.length + 4, values);
      }
    } else {
      // APPNOTE 4.3.9: signed descriptor; 8-byte sizes when the entry is Zip64 (4.3.9.2).
      const d = Buffer.alloc(localZip64 ? 24 : 16);
      d.writeUInt32LE(DATA_DESCRIPTOR_SIGNATURE, 0);
      d.writeUInt32LE(crc >>> 0, 4);
      if (localZip64) { writeU64(d, compressedSize, 8); writeU64(d, size, 16); } else { d.writeUInt32LE(compressedSize, 8); d.writeUInt32LE(size, 12); }
      await sink.write(d);
    }
  }

  const u64 = options.forceZip64 === true || needs64(size);
  const c64 = options.forceZip64 === true || needs64(compressedSize);
  const o64 = options.forceZip64 === true || needs64(offset);
  if ((u64 || c64 || o64) && !context.allowZip64) throw new SigningError('zip_unsupported', `entry ${JSON.stringify(name)} needs Zip64, which is not allowed for this archive`);
  const values = [...(u64 ? [size] : []), ...(c64 ? [compressedSize] : []), ...(o64 ? [offset] : [])];
  const centralRecord = buildCentralRecord({
    versionMadeBy, versionNeeded: values.length > 0 ? VERSION_ZIP64 : versionNeeded, flags, method, ...dos, crc32: crc,
    compressedSize: c64 ? ZIP64_MARKER_32 : compressedSize,
    uncompressedSize: u64 ? ZIP64_MARKER_32 : size,
    nameBytes, extra: withZip64Field(userExtra, values), comment: Buffer.alloc(0),
    internalAttributes: 0, externalAttributes, localHeaderOffset: o64 ? ZIP64_MARKER_32 : offset,
  });
  return { name, localHeaderOffset: offset, dataOffset, method, crc32: crc >>> 0, compressedSize, uncompressedSize: size, centralRecord };
}

/**
 * Puts the final head in place of the provisional one (stored: as it is; deflated: as the stored
 * blocks it was written as) and returns the entry's CRC-32, from the head's and `restCrc`.
 */
async function replaceHead(sink: DataSink, dataOffset: number, method: number, head: { length: number; final: () => Buffer }, restCrc: number, size: number): Promise<number> {
  if (size < head.length) throw new RangeError(`the data ended after ${size} bytes, inside its ${head.length}-byte provisional head`);
  const final = head.final();
  if (final.length !== head.length) throw new RangeError(`the final head is ${final.length} bytes, not the ${head.length} written`);
  await sink.writeAt!(dataOffset, method === METHOD_STORED ? final : storedBlocks(final, size === head.length));
  return crc32Combine(crc32(final), restCrc, size - head.length);
}

/**
 * Streams `data` to the sink (deflating if asked), counting sizes and the CRC as it goes; the CRC
 * leaves out the first `skip` bytes (a provisional head, whose CRC is added once it is final).
 */
async function streamBody(sink: DataSink, data: AsyncIterable<Buffer>, method: number, level: number, pieces: NewEntryOptions['pieces'], skip: number): Promise<{ crc: number; size: number; compressedSize: number }> {
  let crc = 0;
  let size = 0;
  let compressedSize = 0;
  const count = (chunk: Buffer): void => {
    const known = size >= skip ? knownChunkCrc(chunk) : undefined;
    if (known !== undefined) crc = crc32Combine(crc, known, chunk.length);
    else crc = size >= skip ? crc32(chunk, crc) : chunk.length > skip - size ? crc32(chunk.subarray(skip - size), crc) : crc;
    size += chunk.length;
  };
  if (method === METHOD_DEFLATED && pieces !== undefined) {
    const counted = (async function* () {
      for await (const chunk of data) {
        count(chunk);
        yield chunk;
      }
    })();
    for await (const out of deflatePieces(counted, pieces)) {
      compressedSize += out.length;
      await sink.write(out);
    }
    return { crc, size, compressedSize };
  }
  if (method === METHOD_STORED) {
    for await (const chunk of data) {
      count(chunk);
      await sink.write(chunk);
    }
    return { crc, size, compressedSize: size };
  }
  const deflater = createDeflateRaw({ level, chunkSize: 256 * 1024 });
  const feed = (async () => {
    try {
      for await (const chunk of data) {
        count(chunk);
        // events.once rejects if the deflater errors while we wait.
        if (!deflater.write(chunk)) await once(deflater, 'drain');
      }
      deflater.end();
    } catch (error) {
      deflater.destroy(error as Error);
    }
  })();
  for await (const out of deflater as AsyncIterable<Buffer>) {
    compressedSize += out.length;
    await sink.write(out);
  }
  await feed;
  return { crc, size, compressedSize };
}
