// Writing rewritten entries: attributes carried over from the input entry (Unix mode, time,
// "version made by"), or fixed ones for new entries, and a parallel deflate for large files.
import { deflatePiecesOf, firstPieceAfter, PIECE_SIZE, type DeflatePiecesOptions } from '../../zip/deflate-pieces.ts';
import type { ZipEntry, ZipWriter } from '../../zip/index.ts';
import { METHOD_STORED } from '../../zip/index.ts';

const DEFAULT_LEVEL = 6;

// How much the input's own deflate saved decides how a rewritten file is compressed: almost
// nothing (< 0.5 %: encrypted or packed code) → stored, costing at most 0.5 % of that entry;
// little (< 3 %) → deflate level 1, as good as level 6 on such data and several times faster;
// otherwise the requested level. Re-deflating incompressible code at level 6 costs seconds.
const STORE_ABOVE = 0.995;
const FAST_ABOVE = 0.97;

export interface EntryStyle {
  method: 'stored' | 'deflate';
  /** compressed / uncompressed size of the input entry, when it was deflated. */
  ratio?: number;
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
  return ratio >= FAST_ABOVE ? { method: 'deflate', level: 1, ratio, attributes } : { method: 'deflate', ratio, attributes };
}

export async function writeSmallEntry(writer: ZipWriter, name: string, bytes: Buffer, style: EntryStyle): Promise<void> {
  await writer.addEntry(name, bytes, { method: style.method, alignment: 1, ...(style.level === undefined ? {} : { level: style.level }), ...style.attributes });
}

/** A large file ready to be written: stored as its chunks, or already compressed. */
export type LargeEntry =
  | { readonly method: 'stored'; readonly chunks: readonly Buffer[]; readonly size: number }
  | { readonly method: 'deflate'; readonly payload: Buffer; readonly size: number; readonly crc: number };

/**
 * Compresses a large file given as chunks with a known CRC-32, ahead of its write. Deflated files
 * are cut into 1 MiB pieces compressed on libuv's thread pool in parallel, at a level keeping the
 * input's ratio (zip/deflate-pieces.ts: the same bytes as a streamed entry gets). `headLength`: a
 * signed thin Mach-O file's header and load commands (its first chunk), stored ahead of the
 * pieces as the streaming path stores it (streamed-output.ts), so that both paths give the same
 * archive. The re-signer starts this as soon as a file is signed: its write waits for the files
 * before it, and compressing meanwhile keeps the pool busy (on bench:ipa each framework's first
 * piece took ~40 ms to deflate, which the writes used to wait for one after the other).
 */
export async function compressLargeEntry(name: string, chunks: readonly Buffer[], size: number, crc: number, style: EntryStyle, requested: number | undefined, headLength = 0): Promise<LargeEntry> {
  if (style.method === 'stored') return { method: 'stored', chunks, size };
  if (headLength > 0 && chunks[0]?.length !== headLength) throw new Error(`internal: ${name} does not start with its ${headLength}-byte header`);
  const pieces = headLength > 0 ? [chunks[0]!, ...split(chunks.slice(1), PIECE_SIZE, firstPieceAfter(headLength))] : split(chunks, PIECE_SIZE);
  const payload = await deflatePiecesOf(pieces, { ...piecesOptions(style, requested), storedHead: headLength });
  return { method: 'deflate', payload, size, crc };
}

export async function writeLargeEntry(writer: ZipWriter, name: string, entry: LargeEntry, style: EntryStyle): Promise<void> {
  if (entry.method === 'stored') {
    await writer.addEntry(name, iterate(entry.chunks), { method: 'stored', alignment: 1, size: entry.size, ...style.attributes });
    return;
  }
  await writer.addEntry(name, entry.payload, { method: 'deflate', alignment: 1, precompressed: { crc32: entry.crc, uncompressedSize: entry.size }, ...style.attributes });
}

/** The level asked for (the style's, else the caller's), or the default kept only where level 1 would lose ratio. */
export function piecesOptions(style: EntryStyle, requested: number | undefined): DeflatePiecesOptions {
  const level = style.level ?? requested;
  if (level !== undefined) return { level };
  return { level: DEFAULT_LEVEL, ...(style.ratio === undefined ? {} : { targetRatio: style.ratio }) };
}

async function* iterate(chunks: readonly Buffer[]): AsyncGenerator<Buffer> {
  yield* chunks;
}

/** Consecutive pieces of at most `size` bytes (the first of `first`); only pieces spanning two chunks are copied. */
function split(chunks: readonly Buffer[], size: number, first = size): Buffer[] {
  const pieces: Buffer[] = [];
  let pending: Buffer[] = [];
  let pendingLength = 0;
  for (const chunk of chunks) {
    let at = 0;
    while (at < chunk.length) {
      const target = pieces.length === 0 ? first : size;
      const take = Math.min(target - pendingLength, chunk.length - at);
      pending.push(chunk.subarray(at, at + take));
      pendingLength += take;
      at += take;
      if (pendingLength === target) {
        pieces.push(pending.length === 1 ? pending[0]! : Buffer.concat(pending));
        pending = [];
        pendingLength = 0;
      }
    }
  }
  if (pendingLength > 0 || pieces.length === 0) pieces.push(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingLength));
  return pieces;
}
