// Where resumable (tus) uploads collect their bytes before they become an upload: @tus/file-store
// under <dataDir>/uploads-resumable on disk, @tus/s3-store (S3 multipart uploads) in the S3 mode.
// Both expire uploads not finished within `expirationMs`; deleteExpired removes them.
import { createHash, type Hash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { DataStore } from '@tus/utils';
import type { Config } from '../config.ts';

export interface ResumableStore {
  datastore: DataStore;
  /** The bytes of a finished upload. */
  read(id: string): Promise<Readable>;
  /**
   * The local file holding a finished upload's `size` bytes (the disk store), which the blob
   * store may adopt by rename instead of copying, with its SHA-256 when this process hashed every
   * byte on its way in (null after a restart mid-upload: then the blob store reads the file);
   * null where the bytes are not a local file (S3).
   */
  finishedFile(id: string, size: number): { path: string; sha256: string | null } | null;
  /** Forgets an upload: its bytes (if still there: an adopted file is gone) and its record. */
  forget(id: string): Promise<void>;
}

export async function openResumableStore(config: Pick<Config, 'storage' | 'dataDir' | 's3'>, expirationMs: number): Promise<ResumableStore> {
  if (config.storage === 's3') {
    const { S3Store } = await import('@tus/s3-store');
    const store = new S3Store({
      // 8 MiB parts: S3's minimum is 5 MiB; a 2 GiB upload stays far below its 10,000 parts.
      partSize: 8 * 1024 * 1024,
      expirationPeriodInMilliseconds: expirationMs,
      // No object tagging: several S3-compatible servers (R2, s3rver) do not implement it, and the
      // expiry sweep works from the upload records, not from tags.
      useTags: false,
      s3ClientConfig: {
        bucket: config.s3.bucket,
        region: config.s3.region,
        ...(config.s3.endpoint ? { endpoint: config.s3.endpoint } : {}),
        forcePathStyle: config.s3.forcePathStyle,
      },
    });
    return { datastore: store, read: (id) => store.read(id), finishedFile: () => null, forget: (id) => store.remove(id) };
  }
  const { FileStore } = await import('@tus/file-store');
  const directory = path.join(config.dataDir, 'uploads-resumable');
  const store = new FileStore({ directory, expirationPeriodInMilliseconds: expirationMs });
  // FileStore keeps upload `id` in the file <directory>/<id> (its resolve()); ids are our own
  // names (account id + random base64url), never a path.
  const localFile = (id: string) => path.join(directory, id);
  const hashes = new RunningHashes();
  const write = store.write.bind(store);
  store.write = (readable, id, offset) => hashes.write(id, offset, readable, write);
  const remove = store.remove.bind(store);
  store.remove = async (id) => {
    hashes.drop(id);
    await remove(id);
  };
  return {
    datastore: store,
    read: async (id) => store.read(id),
    finishedFile: (id, size) => ({ path: localFile(id), sha256: hashes.take(id, size) }),
    forget: async (id) => {
      hashes.drop(id);
      await rm(localFile(id), { force: true });
      await store.configstore.delete(id);
    },
  };
}

/**
 * SHA-256 of each upload's bytes, updated as PATCH bodies are written (one pass over bytes that
 * are in memory anyway), so finishing an upload needs no second read of a 2 GiB file. A hash is
 * kept only while it covers the file from byte 0 to the offset written: an upload begun before a
 * restart, or a write that failed part way, has none (then the file is read once to hash it).
 */
class RunningHashes {
  readonly #running = new Map<string, { hash: Hash; offset: number }>();

  async write(id: string, offset: number, readable: Readable, write: (readable: Readable, id: string, offset: number) => Promise<number>): Promise<number> {
    if (offset === 0) this.#running.set(id, { hash: createHash('sha256'), offset: 0 });
    const entry = this.#running.get(id);
    if (!entry || entry.offset !== offset) {
      this.#running.delete(id);
      return write(readable, id, offset);
    }
    let hashed = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        entry.hash.update(chunk);
        hashed += chunk.length;
        callback(null, chunk);
      },
    });
    readable.once('error', (error) => hashing.destroy(error));
    try {
      const written = await write(readable.pipe(hashing), id, offset);
      // Kept only when every byte hashed reached the file, and nothing else did.
      if (written === offset + hashed) entry.offset = written;
      else this.#running.delete(id);
      return written;
    } catch (error) {
      this.#running.delete(id);
      throw error;
    }
  }

  /** The digest when it covers exactly `size` bytes; forgets the upload either way. */
  take(id: string, size: number): string | null {
    const entry = this.#running.get(id);
    this.#running.delete(id);
    return entry && entry.offset === size ? entry.hash.digest('hex') : null;
  }

  drop(id: string): void {
    this.#running.delete(id);
  }
}
