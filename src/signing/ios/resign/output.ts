// Writing rewritten entries: attributes carried over from the input entry (Unix mode, time,
// "version made by"), or fixed ones for new entries, and a parallel deflate for large files.
import { promisify } from 'node:util';
import { constants as zlib, deflateRaw, deflateRawSync } from 'node:zlib';
import type { ZipEntry, ZipWriter } from '../../zip/index.ts';
import { METHOD_STORED } from '../../zip/index.ts';

const deflateRawAsync = promisify(deflateRaw);
/** Pieces deflated independently (pigz-style); each restart costs well under 1 % of ratio. */
const PIECE = 256 * 1024;
const SAMPLE = 4 * 1024;
const MAX_STORED = 65535;
const PARALLEL = 4;

// How much the input's own deflate saved decides how a rewritten file is compressed: almost
// nothing (< 0.5 %: encrypted or packed code) → stored, costing at most 0.5 % of that entry;
// little (< 3 %) → deflate level 1, as good as level 6 on such data and several times faster;
// otherwise the requested level. Re-deflating incompressible code at level 6 costs seconds.
const STORE_ABOVE = 0.995;
const FAST_ABOVE = 0.97;

export interface EntryStyle {
  method: 'stored' | 'deflate';
  /** zlib level for 'deflate'; undefined = the caller's level. */
  level?: number;
  attributes: { externalAttributes: number; versionMadeBy: number; dosTime: number; dosDate: number } | { unixMode: number; mtime: Date };
}

/** A rewritten entry keeps its input entry's attributes and method; a new one is a deflated 0644 file. */
export function entryStyle(original: ZipEntry | undefined, time: Date): EntryStyle {
  if (original === undefined) return { method: 'deflate', attributes: { unixMode: 0o100644, mtime: time } };
  const ratio = original.uncompressedSize === 0 ? 1 : original.compressedSize / original.uncompressedSize;
  const attributes = { externalAttributes: original.externalAttributes, versionMadeBy: original.versionMadeBy, dosTime: original.dosTime, dosDate: original.dosDate };
  if (original.method === METHOD_STORED || ratio >= STORE_ABOVE) return { method: 'stored', attributes };
  return ratio >= FAST_ABOVE ? { method: 'deflate', level: 1, attributes } : { method: 'deflate', attributes };
}

export async function writeSmallEntry(writer: ZipWriter, name: string, bytes: Buffer, style: EntryStyle): Promise<void> {
  await writer.addEntry(name, bytes, { method: style.method, alignment: 1, ...(style.level === undefined ? {} : { level: style.level }), ...style.attributes });
}

/**
 * Writes a large file given as chunks with a known CRC-32. Deflated files are cut into 256 KiB
 * pieces compressed on libuv's thread pool in parallel; each but the last ends with a sync flush
 * (byte-aligned, not final), so their concatenation is one valid deflate stream (RFC 1951
 * §3.2.3, as pigz does). A piece whose first 4 KiB do not shrink at level 1 (random or packed
 * data) is written as stored deflate blocks, by hand: compressing it would cost time for nothing.
 */
export async function writeLargeEntry(writer: ZipWriter, name: string, chunks: readonly Buffer[], size: number, crc: number, style: EntryStyle, level: number): Promise<void> {
  if (style.method === 'stored') {
    await writer.addEntry(name, iterate(chunks), { method: 'stored', alignment: 1, size, ...style.attributes });
    return;
  }
  const pieces = split(chunks, PIECE);
  // At most PARALLEL pieces in zlib at once (libuv's pool has 4 threads; more only adds memory).
  // Incompressible pieces stay undefined: they are written as stored blocks straight into the
  // payload below, so the data is copied once, not once per piece and again to join them.
  const compressed: Array<Buffer | undefined> = new Array(pieces.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < pieces.length) {
      const i = next++;
      const piece = pieces[i]!;
      const final = i === pieces.length - 1;
      if (compressible(piece)) compressed[i] = await deflateRawAsync(piece, { level: style.level ?? level, finishFlush: final ? zlib.Z_FINISH : zlib.Z_SYNC_FLUSH });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, pieces.length) }, lane));
  const payload = Buffer.allocUnsafe(pieces.reduce((n, piece, i) => n + (compressed[i]?.length ?? storedBlocksSize(piece.length)), 0));
  let at = 0;
  pieces.forEach((piece, i) => {
    const deflated = compressed[i];
    at = deflated === undefined ? writeStoredBlocks(piece, i === pieces.length - 1, payload, at) : at + deflated.copy(payload, at);
  });
  await writer.addEntry(name, payload, { method: 'deflate', alignment: 1, precompressed: { crc32: crc, uncompressedSize: size }, ...style.attributes });
}

/**
 * RFC 1951 §3.2.4 stored blocks, written directly (a copy, no zlib): each block starts on a byte
 * boundary with the 3 header bits BFINAL + BTYPE 00 padded to a byte, then LEN and its one's
 * complement NLEN (little-endian), then LEN (≤ 65535) raw bytes. Every piece starts byte-aligned
 * (the previous one ended with a sync flush or a stored block), so no bit shifting is needed.
 */
function writeStoredBlocks(piece: Buffer, final: boolean, out: Buffer, start: number): number {
  const blocks = Math.max(1, Math.ceil(piece.length / MAX_STORED));
  let at = start;
  for (let b = 0; b < blocks; b++) {
    const data = piece.subarray(b * MAX_STORED, Math.min(piece.length, (b + 1) * MAX_STORED));
    out[at] = final && b === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(data.length, at + 1);
    out.writeUInt16LE(~data.length & 0xffff, at + 3);
    data.copy(out, at + 5);
    at += 5 + data.length;
  }
  return at;
}

function storedBlocksSize(length: number): number {
  return length + Math.max(1, Math.ceil(length / MAX_STORED)) * 5;
}

function compressible(piece: Buffer): boolean {
  const sample = piece.subarray(0, SAMPLE);
  return deflateRawSync(sample, { level: 1 }).length < sample.length * 0.98;
}

async function* iterate(chunks: readonly Buffer[]): AsyncGenerator<Buffer> {
  yield* chunks;
}

/** Consecutive pieces of at most `size` bytes; only pieces spanning two chunks are copied. */
function split(chunks: readonly Buffer[], size: number): Buffer[] {
  const pieces: Buffer[] = [];
  let pending: Buffer[] = [];
  let pendingLength = 0;
  for (const chunk of chunks) {
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(size - pendingLength, chunk.length - at);
      pending.push(chunk.subarray(at, at + take));
      pendingLength += take;
      at += take;
      if (pendingLength === size) {
        pieces.push(pending.length === 1 ? pending[0]! : Buffer.concat(pending));
        pending = [];
        pendingLength = 0;
      }
    }
  }
  if (pendingLength > 0 || pieces.length === 0) pieces.push(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingLength));
  return pieces;
}
