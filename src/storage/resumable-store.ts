// Where resumable (tus) uploads collect their bytes before they become an upload: @tus/file-store
// under <dataDir>/uploads-resumable on disk, @tus/s3-store (S3 multipart uploads) in the S3 mode.
// Both expire uploads not finished within `expirationMs`; deleteExpired removes them.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { DataStore } from '@tus/utils';
import type { Config } from '../config.ts';

export interface ResumableStore {
  datastore: DataStore;
  /** The bytes of a finished upload. */
  read(id: string): Promise<Readable>;
  /**
   * The local file holding a finished upload's bytes (the disk store), which the blob store may
   * adopt by rename instead of copying; null where the bytes are not a local file (S3).
   */
  localFile(id: string): string | null;
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
    return { datastore: store, read: (id) => store.read(id), localFile: () => null, forget: (id) => store.remove(id) };
  }
  const { FileStore } = await import('@tus/file-store');
  const directory = path.join(config.dataDir, 'uploads-resumable');
  const store = new FileStore({ directory, expirationPeriodInMilliseconds: expirationMs });
  // FileStore keeps upload `id` in the file <directory>/<id> (its resolve()); ids are our own
  // names (account id + random base64url), never a path.
  const localFile = (id: string) => path.join(directory, id);
  return {
    datastore: store,
    read: async (id) => store.read(id),
    localFile,
    forget: async (id) => {
      await rm(localFile(id), { force: true });
      await store.configstore.delete(id);
    },
  };
}
