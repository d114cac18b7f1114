// Reads a range of a DataSource front to back in large blocks with a few reads in flight, and
// hands out exact byte counts as views into those blocks. Signing walks the entries section in
// file order, so this turns thousands of small reads (one per header, one per small entry) into
// a sequential stream that overlaps I/O with hashing.
// The blocks are a fixed ring, refilled as soon as the reader has moved past them: a piece is
// valid only until its callback's promise settles, and consumers copy what they keep (the output
// writer, the content digester and the entry hasher do). Measured with bench/apk.ts (191 MiB):
// a fresh buffer per block let ~60 MB of spent blocks wait for V8's next full collection, and
// peak RSS grew by as much.
// A block may be lent on (BlockLease): the signer's digest thread reads entry bytes from the
// reader's blocks in shared memory rather than a copy (digest-thread.ts); such a block is refilled
// only once the lease gives it back, and at most maxBlocks exist, so a slow borrower holds up the
// reads rather than growing memory.
import type { DataSource } from '../../data-source.ts';

const BLOCK = 1024 * 1024;
const AHEAD = 3;

/** Where the reader's blocks come from and go back to when someone else may still be reading them. */
export interface BlockLease {
  /** Blocks that may exist at once (the reader needs AHEAD + 1 to keep its reads going). */
  readonly maxBlocks: number;
  allocate(size: number): Buffer;
  /** Called once the reader is done with `block`; it is refilled after the returned promise settles. */
  returned(block: Buffer): Promise<void> | undefined;
}

interface Slot {
  readonly buffer: Buffer;
  /** The read filling it, resolving to the valid part. */
  filled: Promise<Buffer>;
}

export class SequentialReader {
  private readonly source: DataSource;
  private readonly end: number;
  private readonly lease: BlockLease | null;
  private nextRead: number;
  private readonly free: Buffer[] = [];
  private allocated = 0;
  // Wakes advance() when a lent block came back while no read was pending.
  private blockBack: (() => void) | null = null;
  private readonly pending: Slot[] = [];
  private current: Buffer = Buffer.alloc(0);
  private currentSlot: Buffer | null = null;
  private currentOffset = 0;
  /** File offset of the next byte `take` returns. */
  position: number;

  constructor(source: DataSource, start: number, end: number, lease: BlockLease | null = null) {
    if (lease !== null && lease.maxBlocks < AHEAD + 1) throw new RangeError(`a lease of ${lease.maxBlocks} blocks is too few for a reader that reads ${AHEAD} ahead`);
    this.source = source;
    this.end = end;
    this.lease = lease;
    this.position = start;
    this.nextRead = start;
    // One block in use, AHEAD being read; allocated lazily, so a short range costs little.
    this.fill();
  }

  /**
   * The next `length` bytes as one or more views, in order; calls `each` for every piece and
   * waits for it. A piece is overwritten once its callback settled: copy what must outlive it.
   */
  async take(length: number, each: (piece: Buffer) => void | Promise<void>): Promise<void> {
    // Callers walk entries in file order; a negative length would mean overlapping entries, which
    // the zip reader refuses, so it is a bug rather than bad input.
    if (length < 0) throw new RangeError(`cannot read backwards (${length} bytes at ${this.position})`);
    if (this.position + length > this.end) throw new RangeError(`read of ${length} bytes at ${this.position} runs past ${this.end}`);
    let left = length;
    while (left > 0) {
      if (this.currentOffset === this.current.length) await this.advance();
      const size = Math.min(left, this.current.length - this.currentOffset);
      const piece = this.current.subarray(this.currentOffset, this.currentOffset + size);
      this.currentOffset += size;
      this.position += size;
      left -= size;
      await each(piece);
    }
  }

  /** Skips `length` bytes (dropped entries); whole blocks in between are still read. */
  async skip(length: number): Promise<void> {
    await this.take(length, () => {});
  }

  private async advance(): Promise<void> {
    // Every piece of the current block has been handed out and its callback has settled.
    if (this.currentSlot !== null) this.recycle(this.currentSlot);
    this.currentSlot = null;
    this.fill();
    while (this.pending.length === 0 && this.nextRead < this.end) {
      // Every block is lent out: wait for one to come back.
      await new Promise<void>((resolve) => (this.blockBack = resolve));
      this.fill();
    }
    const next = this.pending.shift();
    if (next === undefined) throw new RangeError(`read past ${this.end}`);
    this.currentSlot = next.buffer;
    this.current = await next.filled;
    this.currentOffset = 0;
    this.fill();
  }

  private recycle(block: Buffer): void {
    const back = this.lease?.returned(block);
    if (back === undefined) {
      this.free.push(block);
      return;
    }
    // A failed borrower gives its blocks back too (the lease settles either way).
    const give = (): void => {
      this.free.push(block);
      this.fill();
      const wake = this.blockBack;
      this.blockBack = null;
      wake?.();
    };
    back.then(give, give);
  }

  private fill(): void {
    while (this.pending.length < AHEAD && this.nextRead < this.end) {
      const size = Math.min(BLOCK, this.end - this.nextRead);
      // Only the last read can be short, so a short buffer is never reused for a longer one.
      let buffer = this.free.pop();
      if (buffer === undefined) {
        if (this.lease !== null && this.allocated >= this.lease.maxBlocks) return;
        buffer = this.lease?.allocate(size) ?? Buffer.allocUnsafe(size);
        this.allocated += 1;
      }
      const target = buffer.subarray(0, size);
      const offset = this.nextRead;
      const filled = this.source.readInto !== undefined
        ? this.source.readInto(offset, target).then(() => target)
        : this.source.read(offset, size).then((data) => target.subarray(0, data.copy(target)));
      // A rejection surfaces when the block is awaited; until then keep it from being "unhandled".
      filled.catch(() => {});
      this.pending.push({ buffer, filled });
      this.nextRead += size;
    }
  }
}
