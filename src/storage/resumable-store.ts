// Where resumable (tus) uploads collect their bytes before they become an upload: @tus/file-store
// under <dataDir>/uploads-resumable on disk, @tus/s3-store (S3 multipart uploads) in the S3 mode.
// Both expire uploads not finished within `expirationMs`; deleteExpired removes them.
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { DataStore } from '@tus/utils';
import type { Config } from '../config.ts';

export interface ResumableStore {
  datastore: DataStore;
  /** The bytes of a finished upload. */
  read(id: string): Promise<Readable>;
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
    return { datastore: store, read: (id) => store.read(id) };
  }
  const { FileStore } = await import('@tus/file-store');
  const store = new FileStore({ directory: path.join(config.dataDir, 'uploads-resumable'), expirationPeriodInMilliseconds: expirationMs });
  return { datastore: store, read: async (id) => store.read(id) };
}
