// Reads a range of a DataSource front to back in large blocks with a few reads in flight, and
// hands out exact byte counts as views into those blocks. Signing walks the entries section in
// file order, so this turns thousands of small reads (one per header, one per small entry) into
// a sequential stream that overlaps I/O with hashing - and allocates only one buffer per block.
import type { DataSource } from '../../data-source.ts';

const BLOCK = 256 * 1024;
const AHEAD = 4;

export class SequentialReader {
  private readonly source: DataSource;
  private readonly end: number;
  private nextRead: number;
  private readonly pending: Promise<Buffer>[] = [];
  private current: Buffer = Buffer.alloc(0);
  private currentOffset = 0;
  /** File offset of the next byte `take` returns. */
  position: number;

  constructor(source: DataSource, start: number, end: number) {
    this.source = source;
    this.end = end;
    this.position = start;
    this.nextRead = start;
    this.fill();
  }

  /** The next `length` bytes as one or more views, in order; calls `each` for every piece. */
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
    const next = this.pending.shift();
    if (next === undefined) throw new RangeError(`read past ${this.end}`);
    this.current = await next;
    this.currentOffset = 0;
    this.fill();
  }

  private fill(): void {
    while (this.pending.length < AHEAD && this.nextRead < this.end) {
      const size = Math.min(BLOCK, this.end - this.nextRead);
      const promise = this.source.read(this.nextRead, size);
      // A rejection surfaces when the block is awaited; until then keep it from being "unhandled".
      promise.catch(() => {});
      this.pending.push(promise);
      this.nextRead += size;
    }
  }
}
