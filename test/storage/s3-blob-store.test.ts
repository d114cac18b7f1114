import { S3BlobStore } from '../../src/storage/s3-blob-store.ts';
import { startS3rver, type TestS3 } from '../support/s3rver.ts';
import { describeBlobStoreContract } from './blob-store.contract.ts';

let s3: TestS3 | undefined;
describeBlobStoreContract({
  name: 'S3 (s3rver)',
  async open() {
    s3 = await startS3rver();
    return new S3BlobStore({
      bucket: s3.bucket,
      region: 'us-east-1',
      endpoint: s3.endpoint,
      prefix: 'signet',
      forcePathStyle: true,
      credentials: s3.credentials,
      // The smallest part S3 allows, so the contract's 12 MiB body really goes multipart.
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    });
  },
  // Unfinished multipart uploads are invisible as objects (asserted through stat in the suite),
  // and the S3 store writes no local files at all.
  leftovers: async () => [],
  async cleanup() {
    await s3?.close();
  },
});
