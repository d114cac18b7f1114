// The floor's work (bench/floor.ts), the same on whichever thread runs it: the tasks on a slab's
// bytes, the recompression of rewritten content, and the worker side of two-core runs.
import { createHash, hash } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { CHUNK, type ChunkPlan, type Entry, type Slab } from './floor-slabs.ts';

export const PAGE = 4096;
export const PIECE = 256 * 1024;
const SAMPLE = 4 * 1024;
const MAX_STORED = 65535;
const MACHO_MAGICS = new Set([0xcffaedfe, 0xcefaedfe, 0xcafebabe, 0xfeedfacf]);

export type Kind = 'ios' | 'apk';
/** Work on bytes as read (file offsets; the bytes are in slab `slab`, which starts at `base`): an entry, or content-digest chunks. */
export type ReadTask = { type: 'entry'; entry: Entry; sealed: boolean; slab: number; base: number } | { type: 'chunks'; start: number; end: number; slab: number; base: number };
/** One unit of work: a ReadTask, or a piece of rewritten content to deflate. */
export type Task = ReadTask | { type: 'deflate'; piece: Uint8Array; id: number };

/**
 * The work on a slab's entries (iOS: each sealed when inside a framework) and, for apk, on its
 * content-digest chunks, largest first so that the last task to finish is a small one.
 */
export function tasksFor(kind: Kind, slab: Slab, entries: readonly Entry[], chunks: ChunkPlan | null): ReadTask[] {
  const tasks: ReadTask[] = entries.map((entry) => ({ type: 'entry', entry, sealed: kind === 'ios' && isSealed(entry), slab: slab.id, base: slab.start }));
  if (chunks !== null) for (const { start, end } of chunks.ranges(slab)) tasks.push({ type: 'chunks', start, end, slab: slab.id, base: slab.start });
  return tasks.sort((a, b) => cost(b) - cost(a));
}
/** An iOS file whose whole-file digests a parent bundle's seal needs (code inside a framework). */
export function isSealed(entry: Entry): boolean {
  return entry.name.includes('.framework/');
}

export interface Rewrite {
  piece: Uint8Array;
  method: number;
}

/**
 * The work of one entry or content-digest task, on whichever thread runs it (`bytes`: the task's
 * slab): the new content of a rewritten entry (a Mach-O file), in pieces for deflating, else null.
 */
export function runTask(kind: Kind, bytes: Buffer, task: ReadTask): Rewrite[] | null {
  if (task.type === 'chunks') {
    for (let at = task.start; at < task.end; at += CHUNK) createHash('sha256').update(bytes.subarray(at - task.base, Math.min(task.end, at + CHUNK) - task.base)).digest();
    return null;
  }
  const { entry } = task;
  const raw = bytes.subarray(entry.dataOffset - task.base, entry.dataOffset - task.base + entry.compressedSize);
  // Into one buffer of the content's size: zlib's default 16 KiB chunks are joined by a copy at the end.
  const content = entry.method === 0 ? raw : inflateRawSync(raw, { chunkSize: Math.max(64, entry.uncompressedSize) });
  if (kind === 'apk') {
    createHash('sha256').update(content).digest();
    return null;
  }
  if (!isMachO(content)) {
    createHash('sha1').update(content).digest();
    createHash('sha256').update(content).digest();
    return null;
  }
  // One-shot: ~15 % faster on 4 KiB pages than a Hash object per page.
  for (let at = 0; at < content.length; at += PAGE) hash('sha256', content.subarray(at, at + PAGE), 'buffer');
  if (task.sealed) {
    createHash('sha1').update(content).digest();
    createHash('sha256').update(content).digest();
  }
  crc32(content);
  const method = rewriteMethod(entry);
  const pieces: Rewrite[] = [];
  for (let at = 0; at < content.length; at += PIECE) pieces.push({ piece: content.subarray(at, Math.min(content.length, at + PIECE)), method });
  return pieces;
}

/** Whether a Mach-O file is a Mach-O file: its first four bytes. */
export function isMachO(content: Buffer): boolean {
  return content.length >= 4 && MACHO_MAGICS.has(content.readUInt32BE(0));
}

/**
 * How a rewritten entry is written: what the input's deflate saved decides. Almost nothing
 * (< 0.5 %, random or packed code) → stored, which keeps the ratio within 0.5 %; otherwise
 * deflated again.
 */
export function rewriteMethod(entry: Entry): number {
  return entry.method === 0 || entry.compressedSize >= 0.995 * entry.uncompressedSize ? 0 : 8;
}

export function deflatePiece(piece: Uint8Array, method: number): Uint8Array {
  // Stored stays stored; a deflated entry is recompressed at level 1 in independent pieces,
  // each ended by a full flush so they concatenate into one valid stream. A piece whose first
  // 4 KiB or middle 4 KiB do not shrink at level 1 (random or packed code, which `zip -1`
  // deflates when headers and padding save it a percent) becomes stored blocks, a copy:
  // deflating it would only cost time — the re-signer's rule too (src/signing/zip/deflate-pieces.ts).
  if (method === 0) return piece;
  const shrinks = (sample: Uint8Array): boolean => deflateRawSync(sample, { level: 1 }).length < sample.length * 0.98;
  const middle = Math.max(0, Math.min(piece.length - SAMPLE, (piece.length >> 1) & ~(SAMPLE - 1)));
  if (!shrinks(piece.subarray(0, SAMPLE)) || (middle >= SAMPLE && !shrinks(piece.subarray(middle, middle + SAMPLE)))) return storedBlocks(piece);
  return deflateRawSync(piece, { level: 1, finishFlush: 3 /* Z_FULL_FLUSH */ });
}

/** RFC 1951 §3.2.4 stored blocks (not final: a full flush ends the other pieces alike). */
function storedBlocks(piece: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(piece.length + Math.max(1, Math.ceil(piece.length / MAX_STORED)) * 5);
  let at = 0;
  for (let from = 0; from < piece.length || at === 0; from += MAX_STORED) {
    const length = Math.min(MAX_STORED, piece.length - from);
    out[at] = 0;
    out.writeUInt16LE(length, at + 1);
    out.writeUInt16LE(~length & 0xffff, at + 3);
    out.set(piece.subarray(from, from + length), at + 5);
    at += 5 + length;
  }
  return out;
}

/** A task's size, for ordering and batching. */
export function cost(t: Task): number {
  return t.type === 'entry' ? t.entry.compressedSize : t.type === 'chunks' ? t.end - t.start : t.piece.length;
}
/**
 * A worker thread of a two-core run: runs the batches the main thread posts (floor-dispatcher.ts).
 * A rewritten entry found in a slab (a framework's code, a few MiB) is deflated right here, by
 * the worker that inflated it: handing its pieces back for either worker to deflate meant copying
 * the content into fresh shared memory first - a page fault per 4 KiB - and a round trip, which
 * the other worker, busy with the slab's other entries, did not need.
 */
export function serveWorker(): void {
  const { kind } = workerData as { kind: Kind };
  parentPort!.on('message', ({ tasks, slabs }: { tasks: Task[]; slabs: Array<[number, SharedArrayBuffer]> }) => {
    const views = new Map(slabs.map(([id, memory]) => [id, Buffer.from(memory)]));
    const rewrites: Array<[string, Uint8Array[]]> = [];
    const deflated: Array<{ id: number; piece: Uint8Array }> = [];
    const transfer: ArrayBuffer[] = [];
    // A result that owns its memory is handed over, not copied (a stored piece is a view of a slab: shared).
    const handOver = (piece: Uint8Array): Uint8Array => {
      if (!(piece.buffer instanceof SharedArrayBuffer) && piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength && !transfer.includes(piece.buffer)) transfer.push(piece.buffer);
      return piece;
    };
    for (const task of tasks) {
      if (task.type === 'deflate') {
        deflated.push({ id: task.id, piece: handOver(deflatePiece(Buffer.from(task.piece.buffer, task.piece.byteOffset, task.piece.byteLength), 8)) });
        continue;
      }
      const pieces = runTask(kind, views.get(task.slab)!, task);
      if (pieces !== null && task.type === 'entry') rewrites.push([task.entry.name, pieces.map((p) => handOver(deflatePiece(p.piece, p.method)))]);
    }
    parentPort!.postMessage({ rewrites, deflated }, transfer);
  });
}

/** Writes the entries given (local header and data, as in the input; all in `slab`) in file order. */
export function writeUnchanged(write: (data: Uint8Array, offset: number, length: number) => void, slab: Slab, given: readonly Entry[]): void {
  const entries = [...given].sort((a, b) => a.headerOffset - b.headerOffset);
  // Runs of adjacent entries go out in one write.
  for (let i = 0; i < entries.length; ) {
    const from = entries[i]!.headerOffset;
    let to = entries[i]!.dataOffset + entries[i]!.compressedSize;
    for (i++; i < entries.length && entries[i]!.headerOffset === to; i++) to = entries[i]!.dataOffset + entries[i]!.compressedSize;
    write(slab.bytes, from - slab.start, to - from);
  }
}
