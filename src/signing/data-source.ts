// The engines' only window on input bytes: random-access reads by offset, never "the whole file".
// Modelled on apksig's DataSource ("support sources larger than 2 GB"). Offsets are plain numbers:
// uploads are capped well below 2^53 bytes.
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

export interface DataSource {
  readonly size: number;
  /** Exactly `length` bytes from `offset`; fails if the range runs past the end. */
  read(offset: number, length: number): Promise<Buffer>;
  /**
   * Fills `target` with the bytes from `offset` (exactly target.length of them). Optional: lets
   * a sequential reader reuse its buffers instead of allocating one per read.
   */
  readInto?(offset: number, target: Buffer): Promise<void>;
  /** Releases the underlying handle, if any. Idempotent. */
  close(): Promise<void>;
}

export class BufferSource implements DataSource {
  readonly size: number;
  private readonly buffer: Buffer;

  constructor(buffer: Buffer) {
    this.buffer = buffer;
    this.size = buffer.length;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    checkRange(offset, length, this.size);
    return this.buffer.subarray(offset, offset + length);
  }

  async close(): Promise<void> {}
}

export interface FileSourceOptions {
  /**
   * Reads of at most this many bytes are made synchronously, on the calling thread (default 0:
   * every read goes through libuv's thread pool). Opening a zip reads every local header, by the
   * thousand: a pread of a few hundred bytes from the page cache takes microseconds, where an
   * async read costs a thread-pool round trip and a promise. Only for threads that sign (the CLI,
   * the signer pool's threads: SIGNING_READS), which block on their CPU work anyway, and never for
   * the API's event loop, which must not wait on a disk.
   */
  readonly syncReadLimit?: number;
}

/**
 * How the signing pipeline opens files. 64 KiB covers the zip reader's header windows; larger
 * reads (the sequential readers' 1 MiB blocks) stay asynchronous, so that they overlap hashing.
 * Measured with bench/apk.ts's APK (4,559 entries, 1,574 header reads per open; two opens per
 * `signet sign`, the input's and the output's for its verification), on a noisy machine:
 * - an open took 130-152 ms instead of 201-218 ms in a fresh process;
 * - `signet sign`, medians of 12 interleaved runs against the previous commit: 2.48 s instead of
 *   2.61 s of wall time, 3.12 s instead of 3.29 s of CPU, the same peak RSS; bench:apk's
 *   baseline row, 7 runs: 2.03 s instead of 2.05 s;
 * - the iOS bench app (scale 0.5): 2.22 s instead of 2.26 s, within the noise.
 */
export const SIGNING_READS: FileSourceOptions = { syncReadLimit: 64 * 1024 };

export class FileSource implements DataSource {
  readonly size: number;
  /** The file read (another thread may open it itself instead of reading through this one). */
  readonly path: string;
  private readonly handle: FileHandle;
  private readonly syncReadLimit: number;
  private closed = false;

  private constructor(handle: FileHandle, size: number, path: string, options: FileSourceOptions) {
    this.handle = handle;
    this.size = size;
    this.path = path;
    this.syncReadLimit = options.syncReadLimit ?? 0;
  }

  static async open(path: string, options: FileSourceOptions = {}): Promise<FileSource> {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      return new FileSource(handle, size, path, options);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const buffer = Buffer.allocUnsafe(length);
    await this.readInto(offset, buffer);
    return buffer;
  }

  async readInto(offset: number, target: Buffer): Promise<void> {
    const length = target.length;
    checkRange(offset, length, this.size);
    const sync = length <= this.syncReadLimit;
    let done = 0;
    while (done < length) {
      const bytesRead = sync ? readSync(this.handle.fd, target, done, length - done, offset + done) : (await this.handle.read(target, done, length - done, offset + done)).bytesRead;
      if (bytesRead === 0) throw new RangeError(`file shrank while reading at ${offset + done}`);
      done += bytesRead;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

/** A window [offset, offset + size) of another source, itself a source. */
export class SliceSource implements DataSource {
  readonly size: number;
  private readonly parent: DataSource;
  private readonly offset: number;

  constructor(parent: DataSource, offset: number, size: number) {
    checkRange(offset, size, parent.size);
    this.parent = parent;
    this.offset = offset;
    this.size = size;
  }

  read(offset: number, length: number): Promise<Buffer> {
    checkRange(offset, length, this.size);
    return this.parent.read(this.offset + offset, length);
  }

  async close(): Promise<void> {}
}

function checkRange(offset: number, length: number, size: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > size) {
    throw new RangeError(`read of ${length} bytes at ${offset} is outside a source of ${size} bytes`);
  }
}
