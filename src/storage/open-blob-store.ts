// Picks the blob store the config asks for.
import path from 'node:path';
import type { Config } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { DiskBlobStore } from './disk-blob-store.ts';

/** Disk store under `<dataDir>/blobs`, or the S3 store for SIGNET_STORAGE=s3. */
export async function openBlobStore(config: Pick<Config, 'storage' | 'dataDir' | 's3'>): Promise<BlobStore> {
  if (config.storage === 's3') {
    // The AWS SDK (~11 MB) loads only when S3 is configured.
    const { S3BlobStore } = await import('./s3-blob-store.ts');
    return new S3BlobStore({
      bucket: config.s3.bucket,
      region: config.s3.region,
      endpoint: config.s3.endpoint,
      prefix: config.s3.prefix,
      forcePathStyle: config.s3.forcePathStyle,
    });
  }
  return DiskBlobStore.open({ root: path.join(config.dataDir, 'blobs') });
}
