// A read-ahead window over a DataSource: a pass that walks an archive in order (probing entry
// heads, hashing small entries, copying them raw) makes thousands of small reads, and on a busy
// machine each read's trip through libuv's thread pool costs more than the bytes. Serving them
// from one 4 MiB window turns them into a few large reads. Views of the window are handed out,
// so callers must consume (or copy) a result before it is dropped — every caller here does.
import type { DataSource } from '../../data-source.ts';

const WINDOW = 4 * 1024 * 1024;

export class ReadAheadSource implements DataSource {
  readonly size: number;
  private readonly parent: DataSource;
  private readonly windowSize: number;
  private window: Buffer = Buffer.alloc(0);
  private windowStart = 0;

  private readonly reuse: boolean;
  private buffer: Buffer | undefined;

  /**
   * `reuse`: refill one buffer in place (DataSource.readInto) instead of allocating a window per
   * refill. Only for a caller that is done with every view before its next read from this source
   * (verify-written.ts compares and drops each pair): a refill overwrites the views handed out.
   */
  constructor(parent: DataSource, windowSize = WINDOW, options: { reuse?: boolean } = {}) {
    this.parent = parent;
    this.size = parent.size;
    this.windowSize = windowSize;
    this.reuse = options.reuse === true && parent.readInto !== undefined;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    if (length > this.windowSize || (length === this.windowSize && !this.reuse)) return this.parent.read(offset, length);
    if (offset >= this.windowStart && offset + length <= this.windowStart + this.window.length) {
      return this.window.subarray(offset - this.windowStart, offset - this.windowStart + length);
    }
    const end = Math.min(this.size, Math.max(offset + length, offset + this.windowSize));
    // The parent validates the range (a read past the end fails there, as it would without us).
    if (this.reuse) {
      // Cleared first: should the read fail, no stale bytes remain to be served as this range.
      this.window = Buffer.alloc(0);
      // Its own memory (never a slice of Node's shared pool, which other buffers use too).
      this.buffer ??= Buffer.allocUnsafeSlow(this.windowSize);
      const filled = this.buffer.subarray(0, Math.max(length, end - offset));
      await this.parent.readInto!(offset, filled);
      this.window = filled;
    } else {
      this.window = await this.parent.read(offset, Math.max(length, end - offset));
    }
    this.windowStart = offset;
    return this.window.subarray(0, length);
  }

  async close(): Promise<void> {}
}
