// Blobs as objects in an S3-compatible bucket. Puts go through lib-storage's multipart Upload:
// the object only becomes visible when CompleteMultipartUpload succeeds (or, below one part, when
// the single PutObject does), so a failed or refused upload never leaves a partial object.
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { PassThrough, type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { AppError } from '../errors.ts';
import { assertBlobKey } from './blob-keys.ts';
import type { AdoptOptions, BlobInfo, BlobStore, PutOptions, PutResult, ReadOptions } from './blob-store.ts';
import { resolveRange } from './byte-range.ts';
import { createMeter } from './metered-stream.ts';
import { ReadAheadSource, type ReadAheadOptions } from './read-ahead-source.ts';
import type { DataSource } from '../signing/data-source.ts';

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** S3-compatible server URL; null for AWS. */
  endpoint: string | null;
  /** Prepended to every key (a trailing `/` is added when missing). */
  prefix: string;
  forcePathStyle: boolean;
  /** Explicit credentials (tests); by default the SDK's chain (env, shared config, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Block size, read-ahead and cache of openSource (defaults: ReadAheadSource's). */
  readAhead?: Omit<ReadAheadOptions, 'signal'>;
  /** Multipart part size; memory use is about partSize × queueSize per upload (default 16 MiB × 4). */
  partSize?: number;
  queueSize?: number;
}

export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly #client: S3Client;
  readonly #options: S3BlobStoreOptions;
  readonly #prefix: string;

  constructor(options: S3BlobStoreOptions) {
    this.#options = options;
    this.#prefix = options.prefix === '' ? '' : `${options.prefix.replace(/\/+$/, '')}/`;
    this.#client = new S3Client({
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(options.endpoint === null ? {} : { endpoint: options.endpoint }),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Flexible checksums (the SDK default) are not supported by every S3-compatible server;
      // integrity is covered by our own SHA-256 of the stream.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** An upload of the local file (S3 cannot take over a file); the file is removed once stored. */
  async adoptFile(localPath: string, key: string, options: AdoptOptions = {}): Promise<PutResult> {
    assertBlobKey(key); // before the file is opened
    const { sha256: _known, ...putOptions } = options; // put hashes what it uploads
    const result = await this.put(key, createReadStream(localPath, { highWaterMark: 1024 * 1024 }), putOptions);
    await rm(localPath, { force: true });
    return result;
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    const meter = createMeter(options.maxBytes);
    // lib-storage would otherwise guess the size from `body.path` (wrong for ranged file streams);
    // a PassThrough has no path, so parts are cut from the bytes actually read.
    const tunnel = new PassThrough();
    const feeding = pipeline(body, meter.stream, tunnel, options.signal ? { signal: options.signal } : {});
    const objectKey = this.#objectKey(key);
    const upload = new Upload({
      client: this.#client,
      params: {
        Bucket: this.#options.bucket,
        Key: objectKey,
        Body: tunnel,
        ...(options.contentType ? { ContentType: options.contentType } : {}),
      },
      partSize: this.#options.partSize ?? 16 * 1024 * 1024,
      queueSize: this.#options.queueSize ?? 4,
      // We abort the multipart upload ourselves: lib-storage's own abort error would replace the
      // real cause (a too-large body, an aborted request) when the server refuses to abort.
      leavePartsOnError: true,
    });
    const onAbort = () => void upload.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // Both sides can fail first: the feeding pipeline (body error, limit exceeded, abort) or the
    // upload (network, server). The first error is the cause; the other side is then torn down
    // so neither waits forever for the other.
    let cause: unknown;
    const fail = (error: unknown): void => {
      cause ??= error;
      tunnel.destroy(error instanceof Error ? error : new Error(String(error)));
    };
    try {
      await Promise.all([feeding.catch(fail), upload.done().catch(fail)]);
      if (cause !== undefined) throw cause;
      return meter.result();
    } catch (error) {
      await this.#abandon(objectKey, upload.uploadId);
      if (options.signal?.aborted) throw options.signal.reason;
      throw error;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async get(key: string, options: ReadOptions = {}): Promise<Readable> {
    const info = await this.stat(key);
    if (info === null) throw new AppError('not_found', `no blob ${key}`);
    const range = resolveRange(info.size, options);
    const response = await this.#client
      .send(
        new GetObjectCommand({
          Bucket: this.#options.bucket,
          Key: this.#objectKey(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
        options.signal ? { abortSignal: options.signal } : {},
      )
      .catch((error: unknown) => {
      throw isNotFound(error) ? new AppError('not_found', `no blob ${key}`) : error;
    });
    const stream = response.Body as Readable;
    if (range === null) return stream;
    // Some S3-compatible servers ignore or widen a Range (s3rver reads `bytes=0-0` as the whole
    // object; others answer 200 with the full body). Content-Range says which bytes really came,
    // so trim to the requested ones instead of handing the caller the wrong bytes.
    const served = parseContentRange(response.ContentRange) ?? { start: 0 };
    if (served.start > range.start) throw new AppError('internal_error', `S3 served bytes from ${served.start}, not ${range.start}`);
    return served.start === range.start && response.ContentLength === range.end - range.start + 1
      ? stream
      : stream.pipe(slice(stream, range.start - served.start, range.end - range.start + 1));
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#options.bucket, Key: this.#objectKey(key) }));
      return { size: head.ContentLength ?? 0, modifiedAt: (head.LastModified ?? new Date(0)).toISOString() };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#options.bucket, Key: this.#objectKey(key) }));
  }

  /** Partial objects are never visible on S3, and nothing is downloaded to local files. */
  async sweepLeftovers(): Promise<number> {
    return 0;
  }

  async openSource(key: string, options: { signal?: AbortSignal } = {}): Promise<DataSource> {
    const info = await this.stat(key);
    if (info === null) throw new AppError('not_found', `no blob ${key}`);
    const objectKey = this.#objectKey(key);
    return new ReadAheadSource(info.size, (start, end, signal) => this.#readRange(objectKey, start, end, signal), {
      ...this.#options.readAhead,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** Bytes [start, end) of an object in one ranged GET, trimmed to what was asked (see get). */
  async #readRange(objectKey: string, start: number, end: number, signal?: AbortSignal): Promise<Buffer> {
    const response = await this.#client.send(
      new GetObjectCommand({ Bucket: this.#options.bucket, Key: objectKey, Range: `bytes=${start}-${end - 1}` }),
      signal ? { abortSignal: signal } : {},
    );
    const served = parseContentRange(response.ContentRange) ?? { start: 0 };
    if (served.start > start) throw new AppError('internal_error', `S3 served bytes from ${served.start}, not ${start}`);
    const bytes = Buffer.from(await response.Body!.transformToByteArray());
    const from = start - served.start;
    return from === 0 && bytes.length === end - start ? bytes : bytes.subarray(from, from + end - start);
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }

  #objectKey(key: string): string {
    return this.#prefix + assertBlobKey(key);
  }

  /** Best-effort AbortMultipartUpload; a server that refuses (s3rver) leaves parts to its lifecycle rules. */
  async #abandon(objectKey: string, uploadId: string | undefined): Promise<void> {
    if (uploadId === undefined) return;
    await this.#client
      .send(new AbortMultipartUploadCommand({ Bucket: this.#options.bucket, Key: objectKey, UploadId: uploadId }))
      .catch(() => undefined);
  }
}

function isNotFound(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)
  );
}

function parseContentRange(header: string | undefined): { start: number } | null {
  const match = /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(header ?? '');
  return match ? { start: Number(match[1]) } : null;
}

/** Passes `length` bytes after skipping `skip`, then ends and stops the source's remainder. */
function slice(source: Readable, skip: number, length: number): Transform {
  let offset = 0;
  let done = false;
  const end = skip + length;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (done) return callback();
      const from = Math.max(skip - offset, 0);
      const to = Math.min(end - offset, chunk.length);
      offset += chunk.length;
      if (to > from) this.push(chunk.subarray(from, to));
      if (offset >= end) {
        done = true;
        this.push(null);
        source.unpipe(this);
        source.destroy();
      }
      callback();
    },
  });
}
