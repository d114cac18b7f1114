// Deflating large content in independent pieces on libuv's thread pool, several at once, so a
// rewritten entry (a signed 80 MiB executable) is compressed on every core instead of one, as
// pigz does. Each piece is compressed on its own; each but the last ends with a sync flush
// (RFC 1951 §3.2.3: byte-aligned, not final), so the pieces concatenate into one valid deflate
// stream. Each restart loses the 32 KiB window: on 1 MiB pieces a fraction of a percent. A piece
// whose first or middle 4 KiB do not shrink at level 1 (random or packed data) is written as
// stored deflate blocks by hand: compressing it would cost time for nothing. Hand-written:
// node:zlib has no parallel deflate, and no maintained package runs one on libuv's pool.
//
// The same bytes whether the content is in memory (deflatePiecesOf) or streamed (deflatePieces):
// the re-signer's streamed and in-memory paths give identical archives.
//
// A stored head (DeflatePiecesOptions.storedHead): the content's first bytes as stored blocks of
// their own, before the pieces - so that they can be rewritten in place once the stream is written
// (a re-signed Mach-O file's header records the size of a signature built last; new-entry.ts).
// The pieces then keep their places in the content: the first ends where it would have
// (firstPieceAfter), so pieces still fall within the producer's chunks (1 MiB-aligned reads and
// inflates) instead of each straddling two and being copied together.
//
// Level (levelKeepingRatio): given what the input's own deflate achieved on this content, level 1
// is used when a sample (the first piece) compresses at level 1 within 1 % of that ratio, or
// within 1 % of the requested level on the sample — several times faster than level 6 and, on
// code or a `zip -1` archive, as small — otherwise the requested level.
import { promisify } from 'node:util';
import { constants as zlib, deflateRaw, deflateRawSync } from 'node:zlib';

const deflateRawAsync = promisify(deflateRaw);
// Output chunk of one piece's deflate: zlib's default (16 KiB) made several trips between libuv's
// pool and the main thread per piece of code (~50 % ratio), and a concat; half a piece (plus
// slack) takes one or two. The compressed bytes do not depend on it.
const PIECE_OUTPUT_CHUNK = 512 * 1024 + 4096;
// Each piece is a zlib stream of its own and a trip to libuv's pool, whose wake-up the main thread
// pays (on a paravirtualised VM ~0.1 ms: a futex wake behind a hypervisor call, in `perf`). 1 MiB
// pieces take a quarter of the trips of 256 KiB ones: on bench:ipa's code app, six paired runs of
// `signet sign` were 0.04-0.29 s faster in wall time and 0.05-0.28 s in CPU (with the verifier's
// 1 MiB reads, stream-code.ts), the same peak RSS, and the output 0.3 % smaller (fewer restarts).
export const PIECE_SIZE = 1024 * 1024;
/** Pieces in zlib at once: libuv's pool has 4 threads; more only adds memory. */
const PARALLEL = 4;
const SAMPLE = 4 * 1024;
const MAX_STORED = 65535;

export interface DeflatePiecesOptions {
  /** zlib level when level 1 does not keep `targetRatio`, or when none is given. */
  level: number;
  /** compressed / uncompressed size of the input's deflate of this content, if known. */
  targetRatio?: number;
  /** Bytes at the start written as stored blocks ahead of the pieces (see above); default 0. */
  storedHead?: number;
}

/**
 * The level for content whose first piece is `sample` (see above): 1 when, on the sample, it
 * keeps the input's ratio or comes within 1 % of the requested level.
 */
export function levelKeepingRatio(sample: Buffer, options: DeflatePiecesOptions): number {
  if (options.targetRatio === undefined || sample.length === 0 || options.level <= 1) return options.level;
  const fast = deflateRawSync(sample, { level: 1 }).length;
  if (keepsRatio(fast, sample.length, options.targetRatio)) return 1;
  return nearlyAsSmall(fast, deflateRawSync(sample, { level: options.level }).length) ? 1 : options.level;
}

/** Level 1's `fast` bytes keep the input's ratio on `length` bytes (within 1 %, plus the flush's few bytes). */
function keepsRatio(fast: number, length: number, targetRatio: number): boolean {
  return fast <= length * targetRatio * 1.01 + 64;
}

/** Level 1's `fast` bytes come within 1 % of the asked level's `slow` ones. */
function nearlyAsSmall(fast: number, slow: number): boolean {
  return fast <= slow * 1.01 + 64;
}

/**
 * levelKeepingRatio's decision (the same level: deflate's output does not depend on the thread
 * running it) with the sample deflated on libuv's pool: on the main thread those whole-piece
 * deflates took ~36 ms of bench:ipa's code app (21 files), while the main thread hashes pages.
 */
export async function levelKeepingRatioOffThread(sample: Buffer, options: DeflatePiecesOptions): Promise<number> {
  return (await firstPiece(sample, true, options)).level;
}

/**
 * The level for content starting with `piece` (levelKeepingRatio's rule) and that piece's deflate
 * stream at that level: the sample the decision deflates is the first piece itself, compressed
 * with the flush it needs in the stream, so it is not compressed a second time (on bench:ipa's
 * code app, with 256 KiB pieces then, that second deflate was 21 × 256 KiB at level 1, ~50 ms of CPU).
 */
async function firstPiece(piece: Buffer, final: boolean, options: DeflatePiecesOptions): Promise<{ level: number; out: Buffer }> {
  if (options.targetRatio === undefined || piece.length === 0 || options.level <= 1) return { level: options.level, out: await deflatePiece(piece, final, options.level) };
  // Incompressible pieces are written as stored blocks whatever the level: only the decision
  // needs the level-1 deflate of such a piece.
  const keep = (deflated: Buffer): Buffer => (compressible(piece) ? deflated : storedBlocks(piece, final));
  const flush = { finishFlush: final ? zlib.Z_FINISH : zlib.Z_SYNC_FLUSH, chunkSize: PIECE_OUTPUT_CHUNK };
  const fast = await deflateRawAsync(piece, { level: 1, ...flush });
  if (keepsRatio(fast.length, piece.length, options.targetRatio)) return { level: 1, out: keep(fast) };
  const slow = await deflateRawAsync(piece, { level: options.level, ...flush });
  return nearlyAsSmall(fast.length, slow.length) ? { level: 1, out: keep(fast) } : { level: options.level, out: keep(slow) };
}

/** The deflate stream of `data`, in order, compressing up to 4 pieces at once as it reads. */
export async function* deflatePieces(data: AsyncIterable<Buffer>, options: DeflatePiecesOptions): AsyncGenerator<Buffer> {
  const storedHead = options.storedHead ?? 0;
  if (storedHead === 0) return yield* deflateInPieces(data, options);
  const chunks = data[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headLength = 0;
  let next: IteratorResult<Buffer> | undefined;
  while (headLength < storedHead) {
    next = await chunks.next();
    if (next.done === true) break;
    const take = Math.min(storedHead - headLength, next.value.length);
    head.push(next.value.subarray(0, take));
    headLength += take;
    next = take < next.value.length ? { done: false, value: next.value.subarray(take) } : undefined;
  }
  // Final only when nothing follows: the first byte after the head decides.
  while (next === undefined || (next.done !== true && next.value.length === 0)) next = await chunks.next();
  yield storedBlocks(Buffer.concat(head, headLength), next.done === true);
  if (next.done === true) return;
  const first = next.value;
  yield* deflateInPieces((async function* () {
    yield first;
    for (let more = await chunks.next(); more.done !== true; more = await chunks.next()) yield more.value;
  })(), options, firstPieceAfter(storedHead));
}

/** The length of the first piece after a stored head of `head` bytes: up to the next PIECE_SIZE boundary. */
export function firstPieceAfter(head: number): number {
  return PIECE_SIZE - (head % PIECE_SIZE);
}

async function* deflateInPieces(data: AsyncIterable<Buffer>, options: DeflatePiecesOptions, firstSize = PIECE_SIZE): AsyncGenerator<Buffer> {
  let level: Promise<number> | undefined;
  const inflight: Array<Promise<Buffer>> = [];
  const submit = (piece: Buffer, final: boolean): void => {
    let job: Promise<Buffer>;
    if (level === undefined) {
      const first = firstPiece(piece, final, options);
      level = first.then((f) => f.level);
      job = first.then((f) => f.out);
    } else {
      job = level.then((chosen) => deflatePiece(piece, final, chosen));
    }
    job.catch(() => {}); // awaited in order below
    inflight.push(job);
  };
  // A full piece waits until more data shows it is not the last (the last one is final).
  let held: Buffer | undefined;
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let completed = 0;
  try {
    for await (const chunk of data) {
      let at = 0;
      while (at < chunk.length) {
        if (held !== undefined) {
          submit(held, false);
          held = undefined;
          if (inflight.length >= PARALLEL) yield await inflight.shift()!;
        }
        const size = completed === 0 ? firstSize : PIECE_SIZE;
        const take = Math.min(size - pendingLength, chunk.length - at);
        // Not copied (as a zlib stream holds what it is written): producers hand over their chunks.
        pending.push(chunk.subarray(at, at + take));
        pendingLength += take;
        at += take;
        if (pendingLength === size) {
          held = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingLength);
          pending = [];
          pendingLength = 0;
          completed++;
        }
      }
    }
    submit(held ?? (pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingLength)), true);
    while (inflight.length > 0) yield await inflight.shift()!;
  } finally {
    // Stopped early: let the pieces in zlib finish before their buffers are dropped.
    await Promise.allSettled(inflight);
  }
}

async function deflatePiece(piece: Buffer, final: boolean, level: number): Promise<Buffer> {
  if (!compressible(piece)) return storedBlocks(piece, final);
  return deflateRawAsync(piece, { level, finishFlush: final ? zlib.Z_FINISH : zlib.Z_SYNC_FLUSH, chunkSize: PIECE_OUTPUT_CHUNK });
}

/**
 * The same bytes as deflatePieces for content already in memory as `pieces` (each PIECE_SIZE but
 * the last): incompressible pieces are written as stored blocks straight into the payload, so
 * the data is copied once, not once per piece and again to join them.
 */
export async function deflatePiecesOf(pieces: readonly Buffer[], options: DeflatePiecesOptions): Promise<Buffer> {
  // With a stored head, `pieces` starts with it (left undefined below: written as stored blocks).
  const start = (options.storedHead ?? 0) > 0 ? 1 : 0;
  if (start === 1 && pieces[0]?.length !== options.storedHead) throw new RangeError(`the first piece must be the ${options.storedHead}-byte stored head`);
  const compressed: Array<Buffer | undefined> = new Array(pieces.length);
  if (start === pieces.length) return storedBlocks(pieces[0]!, true);
  const first = await firstPiece(pieces[start]!, pieces.length === start + 1, options);
  const level = first.level;
  // The first piece's stream is the decision's sample (stored blocks included: copied as they are).
  compressed[start] = first.out;
  let next = start + 1;
  const lane = async (): Promise<void> => {
    while (next < pieces.length) {
      const i = next++;
      const piece = pieces[i]!;
      if (compressible(piece)) compressed[i] = await deflateRawAsync(piece, { level, finishFlush: i === pieces.length - 1 ? zlib.Z_FINISH : zlib.Z_SYNC_FLUSH, chunkSize: PIECE_OUTPUT_CHUNK });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, pieces.length) }, lane));
  const payload = Buffer.allocUnsafe(pieces.reduce((n, piece, i) => n + (compressed[i]?.length ?? storedBlocksSize(piece.length)), 0));
  let at = 0;
  pieces.forEach((piece, i) => {
    const deflated = compressed[i];
    at = deflated === undefined ? writeStoredBlocks(piece, i === pieces.length - 1, payload, at) : at + deflated.copy(payload, at);
  });
  return payload;
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

/** `piece` as stored blocks (also the bytes that replace a stored head in place). */
export function storedBlocks(piece: Buffer, final: boolean): Buffer {
  const out = Buffer.allocUnsafe(storedBlocksSize(piece.length));
  writeStoredBlocks(piece, final, out, 0);
  return out;
}

function storedBlocksSize(length: number): number {
  return length + Math.max(1, Math.ceil(length / MAX_STORED)) * 5;
}

/**
 * Whether deflating `piece` is worth it: its first 4 KiB and the 4 KiB at its middle both shrink
 * at level 1. One sample at the start judged every Mach-O file's first piece by its header's zero
 * padding (~16 KiB up to the first section), so encrypted or packed code had its first MiB
 * deflated for nothing (bench:ipa's random app: 21 MiB at level 1, ~30 ms a piece on the pool,
 * to save the padding's 16 KiB a file).
 */
function compressible(piece: Buffer): boolean {
  const shrinks = (sample: Buffer): boolean => deflateRawSync(sample, { level: 1 }).length < sample.length * 0.98;
  const middle = Math.max(0, Math.min(piece.length - SAMPLE, (piece.length >> 1) & ~(SAMPLE - 1)));
  return shrinks(piece.subarray(0, SAMPLE)) && (middle < SAMPLE || shrinks(piece.subarray(middle, middle + SAMPLE)));
}
