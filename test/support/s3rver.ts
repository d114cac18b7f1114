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

export interface S3Request {
  method: string;
  /** Path and query, e.g. /signet-test/uploads/tmp_…?x-id=GetObject. */
  path: string;
  /** The Range header, if any. */
  range: string | null;
  status: number;
  /** Response body bytes. */
  bytes: number;
}

/**
 * An HTTP proxy in front of s3rver that records every request, so a test can count what a store
 * asked for (a range GET or a whole-object download). Headers pass unchanged (SigV4 signs Host).
 */
export async function countingS3Proxy(endpoint: string): Promise<{ url: string; requests: S3Request[]; close(): Promise<void> }> {
  const http = await import('node:http');
  const target = new URL(endpoint);
  const requests: S3Request[] = [];
  const server = http.createServer((request, response) => {
    const upstream = http.request({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
      const record: S3Request = { method: request.method ?? '', path: request.url ?? '', range: (request.headers.range as string | undefined) ?? null, status: answer.statusCode ?? 0, bytes: 0 };
      requests.push(record);
      answer.on('data', (chunk: Buffer) => (record.bytes += chunk.length));
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', (error) => response.destroy(error));
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
