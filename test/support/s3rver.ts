// An in-process S3 server (s3rver) for the S3 BlobStore contract tests: ephemeral port, a fresh
// temp directory and one bucket, all removed by `close()`. s3rver ships no types and is CommonJS,
// so it is loaded with require and given the small interface used here.
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** s3rver's fixed credentials. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Folder holding the bucket's files (to check that nothing is left behind). */
  directory: string;
  close(): Promise<void>;
}

export async function startS3rver(bucket = 'signet-test'): Promise<TestS3> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
  const directory = await mkdtemp(path.join(tmpdir(), 'signet-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    directory,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
