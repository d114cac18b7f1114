// The Transform every BlobStore.put pipes through: it hashes and counts the bytes on their way to
// storage (so the SHA-256 needs no second read) and fails the pipeline the moment the body
// exceeds its limit, before the excess reaches the disk or S3.
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { AppError } from '../errors.ts';
import type { PutResult } from './blob-store.ts';

export interface Meter {
  stream: Transform;
  /** Size and digest; valid once the stream has ended. */
  result(): PutResult;
}

export function createMeter(maxBytes: number = Number.POSITIVE_INFINITY): Meter {
  const hash = createHash('sha256');
  let size = 0;
  let digest: string | null = null;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes) {
        callback(new AppError('file_too_large', `the file exceeds the ${maxBytes}-byte limit`, { details: { max_bytes: maxBytes } }));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      digest = hash.digest('hex');
      callback();
    },
  });
  return {
    stream,
    result() {
      if (digest === null) throw new Error('meter read before the stream ended');
      return { size, sha256: digest };
    },
  };
}
