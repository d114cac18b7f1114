// The engines' only window on input bytes: random-access reads by offset, never "the whole file".
// Modelled on apksig's DataSource ("support sources larger than 2 GB"). Offsets are plain numbers:
// uploads are capped well below 2^53 bytes.
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

export class FileSource implements DataSource {
  readonly size: number;
  /** The file read (another thread may open it itself instead of reading through this one). */
  readonly path: string;
  private readonly handle: FileHandle;
  private closed = false;

  private constructor(handle: FileHandle, size: number, path: string) {
    this.handle = handle;
    this.size = size;
    this.path = path;
  }

  static async open(path: string): Promise<FileSource> {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      return new FileSource(handle, size, path);
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
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.handle.read(target, done, length - done, offset + done);
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
