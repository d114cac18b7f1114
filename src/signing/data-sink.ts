// The engines' only window on output bytes: sequential writes with a running position, plus an
// optional in-place overwrite of bytes already written (used to patch a local header once an
// entry's CRC and sizes are known, so no data descriptor is needed). Mirrors data-source.ts.
import { open, type FileHandle } from 'node:fs/promises';

export interface DataSink {
  /** Number of bytes written so far; the offset the next write lands at. */
  readonly position: number;
  write(data: Buffer): Promise<void>;
  /** Overwrites bytes at `offset` (which must already be written). Streaming sinks omit it. */
  writeAt?(offset: number, data: Buffer): Promise<void>;
  /**
   * The file the bytes go to, for sinks that are plain files: its first `flushed` bytes are in
   * the file already, where another thread can read them back (the APK signer's early check of
   * its output, android/sign/digest-thread.ts). Other sinks omit it.
   */
  readonly file?: { readonly path: string; readonly flushed: number };
  /** Flushes and releases the underlying handle, if any. Idempotent. */
  close(): Promise<void>;
}

/** Collects output in memory; for tests and small archives only. */
export class MemorySink implements DataSink {
  private chunks: Buffer[] = [];
  private length = 0;

  get position(): number {
    return this.length;
  }

  async write(data: Buffer): Promise<void> {
    // Copy: callers may reuse their buffers after the write resolves.
    this.chunks.push(Buffer.from(data));
    this.length += data.length;
  }

  async writeAt(offset: number, data: Buffer): Promise<void> {
    checkOverwrite(offset, data.length, this.length);
    const whole = this.toBuffer();
    data.copy(whole, offset);
    this.chunks = [whole];
  }

  /** Everything written so far, as one buffer. */
  toBuffer(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks, this.length)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  async close(): Promise<void> {}
}

/**
 * Writes to a file, coalescing small writes (headers) into a buffer so that a raw copy of many
 * small entries costs few system calls. Large writes go straight through.
 */
export class FileSink implements DataSink {
  private readonly path: string;
  private readonly handle: FileHandle;
  private readonly pending: Buffer;
  private pendingLength = 0;
  private flushed = 0;
  private closed = false;

  private constructor(path: string, handle: FileHandle, bufferSize: number) {
    this.path = path;
    this.handle = handle;
    this.pending = Buffer.allocUnsafe(bufferSize);
  }

  /** Creates (or truncates) `path`. */
  static async create(path: string, options: { bufferSize?: number } = {}): Promise<FileSink> {
    const handle = await open(path, 'w');
    return new FileSink(path, handle, options.bufferSize ?? 1024 * 1024);
  }

  get position(): number {
    return this.flushed + this.pendingLength;
  }

  get file(): { path: string; flushed: number } {
    return { path: this.path, flushed: this.flushed };
  }

  async write(data: Buffer): Promise<void> {
    if (this.closed) throw new Error('FileSink is closed');
    // Only small writes are gathered: a large one (a caller's own batch) would cost a copy and
    // delay its write until the next one fills the buffer.
    const large = data.length * 2 >= this.pending.length;
    if (!large && this.pendingLength + data.length <= this.pending.length) {
      data.copy(this.pending, this.pendingLength);
      this.pendingLength += data.length;
      return;
    }
    await this.flush();
    if (large) {
      await this.writeFully(data, this.flushed);
      this.flushed += data.length;
    } else {
      data.copy(this.pending, 0);
      this.pendingLength = data.length;
    }
  }

  async writeAt(offset: number, data: Buffer): Promise<void> {
    checkOverwrite(offset, data.length, this.position);
    await this.flush();
    await this.writeFully(data, offset);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }

  private async flush(): Promise<void> {
    if (this.pendingLength === 0) return;
    await this.writeFully(this.pending.subarray(0, this.pendingLength), this.flushed);
    this.flushed += this.pendingLength;
    this.pendingLength = 0;
  }

  private async writeFully(data: Buffer, position: number): Promise<void> {
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await this.handle.write(data, done, data.length - done, position + done);
      done += bytesWritten;
    }
  }
}

function checkOverwrite(offset: number, length: number, written: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset + length > written) {
    throw new RangeError(`overwrite of ${length} bytes at ${offset} is outside the ${written} bytes written`);
  }
}
