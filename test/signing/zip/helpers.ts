// Shared helpers for the zip tests: open in-memory archives and assert SigningError codes.
import assert from 'node:assert/strict';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError, type SigningErrorCode } from '../../../src/signing/errors.ts';
import { ZipReader, type ZipLimits } from '../../../src/signing/zip/index.ts';

export function openBuffer(bytes: Buffer, limits?: Partial<ZipLimits>): Promise<ZipReader> {
  return ZipReader.open(new BufferSource(bytes), limits === undefined ? {} : { limits });
}

export async function readAll(zip: ZipReader): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const entry of zip.entries) {
    const chunks: Buffer[] = [];
    for await (const chunk of zip.contentChunks(entry)) chunks.push(chunk);
    out.set(entry.name, Buffer.concat(chunks));
  }
  return out;
}

export async function rejectsWith(promise: Promise<unknown>, code: SigningErrorCode, pattern?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof SigningError, `expected SigningError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}
