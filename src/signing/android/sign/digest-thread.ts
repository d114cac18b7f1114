// The v1 entry digests of a large APK on a thread of their own. Inflating the entries, hashing
// what comes out and checking its CRC-32 was most of what the signer's main thread did while it
// copied the entries, and it left the second core mostly idle: on bench:apk the main thread was
// busy for ~0.5 s of a ~0.65 s copy, ~0.3 s of it on these digests. Here the main thread only
// copies (and takes the v2/v3 content digest) while the thread digests the same bytes beside it.
//
// Nothing is read twice and nothing is copied to get there: the sequential reader's blocks live
// in shared memory (this is its BlockLease), the main thread tells the thread where in them each
// entry's bytes lie, block by block, and the reader refills a block only once the thread has
// given it back, so a thread that falls behind holds up the reads rather than growing memory.
// The thread hashes with the in-process code (digest-worker.ts runs EntryContentHasher), so both
// paths give the same digests and the same errors. It takes the entries where the bytes are; small
// ones, where the cost is per entry rather than per byte, stay on the main thread, which then
// waits less for the thread at the end (on bench:apk the last 3,000 entries are ~1.7 KB XML files
// that kept the thread busy ~60 ms after the main thread was done) and the thread's heap stays
// small. Then, while the main thread writes the v1 files, the signing block and the central
// directory (~0.1 s on bench:apk, with the second core idle), the thread reads the entries already
// written back from the output file and takes their v2/v3 chunk digests, which the verification of
// the output would otherwise take afterwards (readBack; SPECIFICATION.md §8 says why the proof
// holds). A thread costs ~30 ms of CPU to start and ~12 MB while it runs, so only large APKs use
// one (sign-apk.ts); it exits before the output is verified.
import { closeSync, openSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { SigningError } from '../../errors.ts';
import type { DigestMessage, DigestWorkMessage, PieceOp } from './digest-worker.ts';
import { CHUNK_SIZE, type ChunkedAlgorithm, type ContentPrefix } from '../content-digest.ts';
import { inflatesInBackground, InProcessDigests, type EntryDigestPass, type HashedEntry } from './entry-digest.ts';
import type { BlockLease } from './sequential-reader.ts';

// Blocks the thread may hold at once beyond the reader's own four (one being taken apart, three
// being read). More let the main thread run further ahead while the thread inflates the large
// entries, but each is 1 MiB: `signet sign` of bench:apk, 10 alternating pairs, 1.005 s and
// 111.4 MiB peak (max 112.4) with one, 1.020 s and 112.9 MiB (max 115.3) with two; six (and
// smaller inflation queues) made no difference in time.
const LENT_BLOCKS = 1;
// Entries with fewer bytes of data than this are digested on the main thread.
const THREAD_ENTRY_MIN = 16 * 1024;
// SHARED: the large deflated entries (entry-digest.ts inflatesInBackground: a dex file) alternate
// between the thread and the main thread. Each side inflates one such entry at a time - its zlib
// stream waits for its own JavaScript thread between steps - so with all of them on the thread,
// the start of bench:apk (six 10 MiB dex files) ran at the speed of one inflation: the main thread
// waited ~135 ms of ~175 ms for the thread to give its blocks back. Shared, two inflate at once:
// `signet sign` 0.985 against 1.025 s, 12 alternating pairs, peak RSS 112.9 against 112.0 MiB.
// (Taken in turn rather than whenever the thread is behind, so the split does not depend on timing.)

interface Loan {
  readonly back: Promise<void>;
  readonly resolve: () => void;
}

export class DigestThread implements BlockLease, EntryDigestPass {
  readonly maxBlocks = 4 + LENT_BLOCKS;
  private readonly worker: Worker;
  private readonly blocks = new Map<ArrayBufferLike, number>();
  private unsent: [number, SharedArrayBuffer][] = [];
  // The pieces in the block being taken apart, sent when the reader moves on or gives it back.
  private ops: PieceOp[] = [];
  private opsBlock = -1;
  private readonly lent = new Map<number, Loan>();
  private readonly local = new InProcessDigests();
  // Each entry's index on the thread, or -1 for one digested here.
  private onThread = new Int32Array(0);
  private threadEntries = 0;
  private failure: unknown = null;
  private readonly result: Promise<Buffer[]>;
  private rejectResult: (error: unknown) => void = () => {};
  private reading: { end: number; resolve: (prefix: ContentPrefix) => void; reject: (error: unknown) => void } | null = null;
  // The output file, opened here for the thread's read-back and closed here once it has stopped.
  private readFd: number | null = null;

  /** Starts the thread at once, so that it loads while the caller opens the APK; `start` gives it the entries. */
  constructor() {
    this.worker = new Worker(new URL('./digest-worker.ts', import.meta.url));
    this.result = new Promise<Buffer[]>((resolve, reject) => {
      this.rejectResult = reject;
      this.worker.on('message', (message: DigestMessage) => {
        if (message.kind === 'returned') this.giveBack(message.block);
        else if (message.kind === 'digests') resolve(split(message.digests, message.size));
        else if (message.kind === 'readBack') this.readBackDone(message.chunks);
        else this.fail(message.code === undefined ? new Error(message.message) : new SigningError(message.code, message.message, message.details === undefined ? {} : { details: message.details }));
      });
    });
    this.result.catch(() => {}); // surfaced by all()
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the v1 digest thread exited with code ${code} before it was done`)));
  }

  /** The entries to digest (`update` and `end` name them by their index here) and the Node hash name. */
  start(entries: readonly HashedEntry[], algorithm: string): void {
    this.local.start(entries, algorithm);
    this.onThread = new Int32Array(entries.length).fill(-1);
    const sent: HashedEntry[] = [];
    let inflated = 0;
    entries.forEach((entry, index) => {
      const { name, method, compressedSize, uncompressedSize, crc32 } = entry;
      if (compressedSize < THREAD_ENTRY_MIN) return;
      // Every other one of the large deflated entries stays here (see SHARED above).
      if (inflatesInBackground(entry) && inflated++ % 2 === 1) return;
      this.onThread[index] = sent.length;
      sent.push({ name, method, compressedSize, uncompressedSize, crc32 });
    });
    this.threadEntries = sent.length;
    this.post({ kind: 'entries', algorithm, entries: sent });
  }

  allocate(size: number): Buffer {
    const memory = new SharedArrayBuffer(size);
    const id = this.blocks.size;
    this.blocks.set(memory, id);
    this.unsent.push([id, memory]);
    return Buffer.from(memory);
  }

  returned(block: Buffer): Promise<void> | undefined {
    const id = this.blockOf(block);
    if (this.opsBlock === id) this.send();
    return this.lent.get(id)?.back;
  }

  /** Bytes of entry `index`, in order, as views into this lease's blocks; throws once the thread failed. */
  update(index: number, raw: Buffer): void | Promise<void> {
    if (this.failure !== null) throw this.failure;
    const at = this.onThread[index]!;
    if (at === -1) return this.local.update(index, raw);
    const id = this.blockOf(raw);
    if (this.opsBlock !== id) {
      this.send();
      this.opsBlock = id;
    }
    this.ops.push([at, id, raw.byteOffset, raw.length]);
  }

  /** All of entry `index` has been given (an empty entry gets no `update`). */
  end(index: number): void | Promise<void> {
    const at = this.onThread[index]!;
    if (at === -1) return this.local.end(index);
    this.ops.push([at, -1, 0, 0]);
  }

  /** The digests in entry order, once the thread is done (it then waits for a readBack, or close). */
  async all(): Promise<Buffer[]> {
    this.send();
    this.post({ kind: 'end' });
    const [local, threaded] = await Promise.all([this.local.digests(), this.result]);
    // The read blocks are no longer lent: nothing here keeps them from the garbage collector.
    this.blocks.clear();
    if (threaded.length !== this.threadEntries) throw new Error(`internal: the digest thread returned ${threaded.length} of ${this.threadEntries} digests`);
    return [...this.onThread].map((at, index) => (at === -1 ? local.get(index)! : threaded[at]!));
  }

  /**
   * After all(): the v2/v3 chunk digests of the output file's first `end` bytes (whole chunks,
   * already in the file), read back by the thread while the main thread finishes the APK. The
   * verifier then reads only what follows (verify/content-pass.ts `prefix`).
   */
  readBack(path: string, end: number, algorithms: readonly ChunkedAlgorithm[]): Promise<ContentPrefix> {
    if (end % CHUNK_SIZE !== 0) throw new RangeError(`a read-back must end on a chunk boundary, not at ${end}`);
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.reading !== null) throw new Error('internal: one read-back at a time on the digest thread');
    const done = new Promise<ContentPrefix>((resolve, reject) => (this.reading = { end, resolve, reject }));
    this.readFd = openSync(path, 'r');
    this.post({ kind: 'readBack', fd: this.readFd, end, algorithms: [...algorithms] });
    return done;
  }

  /** Stops the thread: after all(), or when the signing failed. */
  async close(): Promise<void> {
    this.fail(new Error('the v1 digest thread was stopped'));
    await this.worker.terminate();
    // Only now: the thread may have been reading through it until it stopped.
    if (this.readFd !== null) closeSync(this.readFd);
    this.readFd = null;
  }

  private blockOf(bytes: Buffer): number {
    const id = this.blocks.get(bytes.buffer);
    if (id === undefined) throw new Error('internal: entry bytes outside the digest thread\'s blocks');
    return id;
  }

  /** Sends the pending pieces; their block is lent to the thread until it says it is done with them. */
  private send(): void {
    if (this.ops.length === 0) return;
    const block = this.opsBlock;
    if (block !== -1 && this.failure === null && !this.lent.has(block)) {
      let resolve!: () => void;
      const back = new Promise<void>((r) => (resolve = r));
      this.lent.set(block, { back, resolve });
    }
    this.post({ kind: 'ops', blocks: this.unsent, ops: this.ops, block });
    this.unsent = [];
    this.ops = [];
    this.opsBlock = -1;
  }

  private post(message: DigestWorkMessage): void {
    if (this.failure === null) this.worker.postMessage(message);
  }

  private readBackDone(chunks: [ChunkedAlgorithm, Uint8Array[]][]): void {
    const reading = this.reading;
    this.reading = null;
    reading?.resolve({ end: reading.end, chunks: new Map(chunks.map(([algorithm, digests]) => [algorithm, digests.map((d) => Buffer.from(d.buffer, d.byteOffset, d.length))])) });
  }

  private giveBack(block: number): void {
    const loan = this.lent.get(block);
    if (loan === undefined) return;
    this.lent.delete(block);
    loan.resolve();
  }

  private fail(error: unknown): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.rejectResult(error);
    this.reading?.reject(error);
    this.reading = null;
    // Nothing reads the blocks any more: the reader may refill them.
    for (const block of [...this.lent.keys()]) this.giveBack(block);
  }
}

function split(digests: Uint8Array, size: number): Buffer[] {
  const all = Buffer.from(digests.buffer, digests.byteOffset, digests.length);
  const out: Buffer[] = [];
  for (let at = 0; at < all.length; at += size) out.push(all.subarray(at, at + size));
  return out;
}
