// Blobs as files under one root directory (`<dataDir>/blobs`). A put streams into
// `<root>/.tmp/<this process>/<random>.part` and renames into place when complete: rename(2)
// within one file system is atomic, so readers see the whole old blob or the whole new one, never
// a partial file. Temp files live under the root (not os.tmpdir()) to stay on the same file
// system, in a folder owned by this process (scratch.ts), so what a killed process left is
// removed at the next start or sweep whatever its age.
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors.ts';
import { assertBlobKey } from './blob-keys.ts';
import type { AdoptOptions, BlobInfo, BlobStore, PutOptions, PutResult, ReadOptions } from './blob-store.ts';
import { resolveRange } from './byte-range.ts';
import { createMeter } from './metered-stream.ts';
import { earlyWriteback } from './early-writeback.ts';
import { ProcessScratch, sweepDeadOwners } from './scratch.ts';
import { FileSource, type DataSource } from '../signing/data-source.ts';

const TEMP_DIR = '.tmp';

export class DiskBlobStore implements BlobStore {
  readonly kind = 'disk';
  readonly #root: string;
  readonly #scratch: ProcessScratch;

  private constructor(root: string, scratch: ProcessScratch) {
    this.#root = root;
    this.#scratch = scratch;
  }

  /** Creates the root (0700), removes temp files left by dead processes, and takes a temp folder. */
  static async open(options: { root: string }): Promise<DiskBlobStore> {
    const root = path.resolve(options.root);
    await fs.mkdir(path.join(root, TEMP_DIR), { recursive: true, mode: 0o700 });
    await sweepDeadOwners(path.join(root, TEMP_DIR));
    return new DiskBlobStore(root, await ProcessScratch.open(path.join(root, TEMP_DIR)));
  }

  async sweepLeftovers(): Promise<number> {
    return sweepDeadOwners(path.join(this.#root, TEMP_DIR));
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    const target = this.#path(key);
    const temp = path.join(this.#scratch.dir, `${randomBytes(12).toString('hex')}.part`);
    const meter = createMeter(options.maxBytes);
    try {
      // flush: fsync before close, so a crash right after the rename cannot leave an empty blob.
      const sink = createWriteStream(temp, { flags: 'wx', mode: 0o600, flush: true });
      await pipeline(body, meter.stream, earlyWriteback(sink), sink, options.signal ? { signal: options.signal } : {});
      await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await fs.rename(temp, target);
      return meter.result();
    } catch (error) {
      await fs.rm(temp, { force: true });
      if (options.signal?.aborted) throw options.signal.reason;
      throw error;
    }
  }

  async adoptFile(localPath: string, key: string, options: AdoptOptions = {}): Promise<PutResult> {
    const target = this.#path(key);
    // The adopted file keeps the store's permissions whoever created it (set first, so that the
    // fsync below covers it too).
    await fs.chmod(localPath, 0o600);
    // Durable before it becomes visible, like put's flushed temp file. The fsync runs while the
    // file is hashed rather than after it: the hash reads the page cache while the fsync waits on
    // the disk (a 191 MiB signed APK in the task worker: ~0.16 s hashing then ~0.08 s fsync one
    // after the other; ~0.17 s together, timed in bench/apk.ts's server).
    // One read for the hash (and the size limit) into one reused buffer: no second copy of the
    // bytes is written, and a 2 GiB file leaves no garbage buffers for the GC to catch up with.
    const [result] = await Promise.all([options.sha256 ? sizeOf(localPath, options, options.sha256) : hashFile(localPath, options), syncFile(localPath)]);
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    try {
      await fs.rename(localPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // Another file system (the tus folder mounted elsewhere): copy through a temp file, atomically.
      const { sha256: _known, ...putOptions } = options;
      const copied = await this.put(key, createReadStream(localPath), putOptions);
      await fs.rm(localPath, { force: true });
      return copied;
    }
    return result;
  }

  async get(key: string, options: ReadOptions = {}): Promise<Readable> {
    // Open first, then stat the handle: a concurrent delete cannot slip between the size check
    // and the read (the open file outlives its unlinking).
    const handle = await fs.open(this.#path(key), 'r').catch((error: unknown) => {
      throw isMissing(error) ? new AppError('not_found', `no blob ${key}`) : error;
    });
    try {
      const { size } = await handle.stat();
      const range = resolveRange(size, options);
      return handle.createReadStream({
        ...(range ?? {}),
        autoClose: true,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const stat = await fs.stat(this.#path(key));
      return stat.isFile() ? { size: stat.size, modifiedAt: stat.mtime.toISOString() } : null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.#path(key), { force: true });
  }

  async openSource(key: string): Promise<DataSource> {
    return FileSource.open(this.#path(key)).catch((error: unknown) => {
      throw isMissing(error) ? new AppError('not_found', `no blob ${key}`) : error;
    });
  }

  async close(): Promise<void> {
    await this.#scratch.close();
  }

  #path(key: string): string {
    const file = path.resolve(this.#root, assertBlobKey(key));
    // assertBlobKey already rules out `..` and absolute keys; this second check guards the one
    // property that matters (the file is inside the root) against any future key-rule change.
    if (!file.startsWith(this.#root + path.sep)) throw new AppError('invalid_request', `invalid blob key "${key}"`);
    return file;
  }
}

/** fsync(2) of a file's data and metadata. */
async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The size of a file whose digest is known; `file_too_large` past maxBytes. */
async function sizeOf(file: string, options: AdoptOptions, sha256: string): Promise<PutResult> {
  options.signal?.throwIfAborted();
  const { size } = await fs.stat(file);
  if (size > (options.maxBytes ?? Number.POSITIVE_INFINITY)) throw new AppError('file_too_large', `the file exceeds the ${options.maxBytes}-byte limit`, { details: { max_bytes: options.maxBytes } });
  return { size, sha256 };
}

/** Size and SHA-256 of a file, read through one buffer; `file_too_large` past maxBytes. */
async function hashFile(file: string, options: AdoptOptions): Promise<PutResult> {
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const handle = await fs.open(file, 'r');
  let size = 0;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, size);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > maxBytes) throw new AppError('file_too_large', `the file exceeds the ${maxBytes}-byte limit`, { details: { max_bytes: maxBytes } });
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return { size, sha256: hash.digest('hex') };
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
