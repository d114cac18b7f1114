// The BlobStore contract, run unchanged against the disk store (disk-blob-store.test.ts) and the
// S3 store on s3rver (s3-blob-store.test.ts).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import type { BlobStore } from '../../src/storage/blob-store.ts';
import { AppError } from '../../src/errors.ts';

export interface BlobStoreBackend {
  name: string;
  open(): Promise<BlobStore>;
  /** Implementation-specific traces of unfinished writes (e.g. temp files); must be empty after any put settles. */
  leftovers(): Promise<string[]>;
  cleanup(): Promise<void>;
}

const isCode = (code: string) => (error: unknown) => error instanceof AppError && error.code === code;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Deterministic bytes, streamed in `chunk`-sized pieces (optionally failing after `failAfter` bytes). */
function body(size: number, options: { chunk?: number; failAfter?: number; seed?: number } = {}): { data: Buffer; stream: Readable } {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + (options.seed ?? 7)) & 0xff;
  const chunk = options.chunk ?? 64 * 1024;
  async function* pieces() {
    for (let offset = 0; offset < size; offset += chunk) {
      if (options.failAfter !== undefined && offset >= options.failAfter) throw new Error('client went away');
      await new Promise((resolve) => setImmediate(resolve));
      yield data.subarray(offset, Math.min(size, offset + chunk));
    }
  }
  return { data, stream: Readable.from(pieces()) };
}

const readAll = async (stream: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export function describeBlobStoreContract(backend: BlobStoreBackend): void {
  describe(`BlobStore on ${backend.name}`, () => {
    let store: BlobStore;
    before(async () => {
      store = await backend.open();
    });
    after(async () => {
      await store?.close();
      await backend.cleanup();
    });

    test('put streams, hashes and stores; get/stat/exists read it back', async () => {
      const { data, stream } = body(300_000);
      const result = await store.put('uploads/tmp_roundtrip', stream, { maxBytes: 1_000_000, contentType: 'application/octet-stream' });
      assert.deepEqual(result, { size: data.length, sha256: sha256(data) });
      assert.deepEqual(await readAll(await store.get('uploads/tmp_roundtrip')), data);
      const info = await store.stat('uploads/tmp_roundtrip');
      assert.equal(info?.size, data.length);
      assert.ok(info && Math.abs(Date.parse(info.modifiedAt) - Date.now()) < 60_000);
      assert.equal(await store.exists('uploads/tmp_roundtrip'), true);
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('a body spanning several multipart parts arrives intact', async () => {
      const { data, stream } = body(12 * 1024 * 1024 + 123, { chunk: 1024 * 1024 });
      const result = await store.put('artifacts/tsk_big.ipa', stream);
      assert.deepEqual(result, { size: data.length, sha256: sha256(data) });
      assert.equal(sha256(await readAll(await store.get('artifacts/tsk_big.ipa'))), sha256(data));
      await store.delete('artifacts/tsk_big.ipa');
    });

    test('empty blobs are stored; a put replaces the previous blob', async () => {
      assert.deepEqual(await store.put('uploads/tmp_empty', Readable.from([])), { size: 0, sha256: sha256(Buffer.alloc(0)) });
      assert.equal((await readAll(await store.get('uploads/tmp_empty'))).length, 0);
      await store.put('uploads/tmp_replace', body(100, { seed: 1 }).stream);
      const second = body(50, { seed: 2 });
      await store.put('uploads/tmp_replace', second.stream);
      assert.deepEqual(await readAll(await store.get('uploads/tmp_replace')), second.data);
    });

    test('range reads are inclusive, clamp the end and refuse ranges outside the blob', async () => {
      const { data, stream } = body(1000);
      await store.put('uploads/tmp_range', stream);
      const range = async (start?: number, end?: number) =>
        readAll(await store.get('uploads/tmp_range', { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) }));
      assert.deepEqual(await range(0, 0), data.subarray(0, 1));
      assert.deepEqual(await range(10, 19), data.subarray(10, 20));
      assert.deepEqual(await range(990), data.subarray(990));
      assert.deepEqual(await range(undefined, 4), data.subarray(0, 5));
      assert.deepEqual(await range(995, 5000), data.subarray(995));
      assert.deepEqual(await range(999, 999), data.subarray(999));
      await assert.rejects(range(1000), isCode('range_not_satisfiable'));
      await assert.rejects(range(20, 10), isCode('range_not_satisfiable'));
      await assert.rejects(range(-1, 3), isCode('range_not_satisfiable'));
      await store.put('uploads/tmp_empty_range', Readable.from([]));
      await assert.rejects(store.get('uploads/tmp_empty_range', { start: 0 }), isCode('range_not_satisfiable'));
    });

    test('missing blobs: get and openSource reject not_found, stat is null, delete is a no-op', async () => {
      await assert.rejects(store.get('uploads/tmp_missing'), isCode('not_found'));
      await assert.rejects(store.openSource('uploads/tmp_missing'), isCode('not_found'));
      assert.equal(await store.stat('uploads/tmp_missing'), null);
      assert.equal(await store.exists('uploads/tmp_missing'), false);
      await store.delete('uploads/tmp_missing');
      await store.put('uploads/tmp_deleted', body(10).stream);
      await store.delete('uploads/tmp_deleted');
      assert.equal(await store.stat('uploads/tmp_deleted'), null);
      await store.delete('uploads/tmp_deleted');
    });

    test('exceeding maxBytes is refused and leaves nothing behind (not even over an older blob)', async () => {
      const older = body(10, { seed: 3 });
      await store.put('uploads/tmp_limit', older.stream);
      await assert.rejects(store.put('uploads/tmp_limit', body(6 * 1024 * 1024, { chunk: 256 * 1024 }).stream, { maxBytes: 5 * 1024 * 1024 }), isCode('file_too_large'));
      assert.deepEqual(await readAll(await store.get('uploads/tmp_limit')), older.data, 'the older blob is untouched');
      await assert.rejects(store.put('uploads/tmp_limit_new', body(2048).stream, { maxBytes: 2047 }), isCode('file_too_large'));
      assert.equal(await store.stat('uploads/tmp_limit_new'), null);
      assert.deepEqual(await store.put('uploads/tmp_limit_exact', body(2048).stream, { maxBytes: 2048 }), { size: 2048, sha256: sha256(body(2048).data) });
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('a failing source stream or an abort leaves nothing behind', async () => {
      await assert.rejects(store.put('uploads/tmp_broken', body(8 * 1024 * 1024, { failAfter: 6 * 1024 * 1024 }).stream), /client went away/);
      assert.equal(await store.stat('uploads/tmp_broken'), null);
      const controller = new AbortController();
      const reason = new Error('shutting down');
      const pending = store.put('uploads/tmp_aborted', body(8 * 1024 * 1024, { chunk: 64 * 1024 }).stream, { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 20);
      await assert.rejects(pending, (error: unknown) => error === reason);
      assert.equal(await store.stat('uploads/tmp_aborted'), null);
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('adoptFile takes over a local file as a blob: hashed, readable, gone from where it was', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'signet-adopt-'));
      try {
        const { data } = body(3 * 1024 * 1024 + 5);
        const file = path.join(dir, 'finished');
        await writeFile(file, data);
        assert.deepEqual(await store.adoptFile(file, 'uploads/tmp_adopted', { maxBytes: data.length }), { size: data.length, sha256: sha256(data) });
        assert.deepEqual(await readAll(await store.get('uploads/tmp_adopted')), data);
        assert.equal((await store.stat('uploads/tmp_adopted'))?.size, data.length);
        assert.equal(existsSync(file), false, 'the local file is gone');

        // Too large: refused, no blob, and the file stays where it was (its owner removes it).
        await writeFile(file, data);
        await assert.rejects(store.adoptFile(file, 'uploads/tmp_adopt_big', { maxBytes: data.length - 1 }), isCode('file_too_large'));
        assert.equal(await store.stat('uploads/tmp_adopt_big'), null);
        assert.deepEqual(await readFile(file), data, 'the refused file is untouched');

        // Aborted: rejects with the reason, no blob.
        const controller = new AbortController();
        const reason = new Error('shutting down');
        controller.abort(reason);
        await assert.rejects(store.adoptFile(file, 'uploads/tmp_adopt_aborted', { signal: controller.signal }), (error: unknown) => error === reason);
        assert.equal(await store.stat('uploads/tmp_adopt_aborted'), null);

        // A missing file: rejects, no blob. An unsafe key: refused before the file is touched.
        await assert.rejects(store.adoptFile(path.join(dir, 'missing'), 'uploads/tmp_adopt_missing'), { code: 'ENOENT' });
        assert.equal(await store.stat('uploads/tmp_adopt_missing'), null);
        await assert.rejects(store.adoptFile(file, '../escape'), isCode('invalid_request'));
        assert.equal(existsSync(file), true);
        assert.deepEqual(await backend.leftovers(), []);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    test('openSource reads any range of the blob where it is stored, and not_found when missing', async () => {
      // Bigger than the S3 read-ahead block, with reads crossing block edges, at the ends, and
      // sequential runs (the read-ahead path).
      const { data, stream } = body(3 * 1024 * 1024 + 123, { chunk: 256 * 1024 });
      await store.put('uploads/tmp_source', stream);
      const source = await store.openSource('uploads/tmp_source');
      try {
        assert.equal(source.size, data.length);
        const reads: Array<[number, number]> = [[data.length - 22, 22], [0, 1], [262_100, 1_000], [1_000_000, 1_500_000], [data.length - 1, 1], [5, 0]];
        for (let offset = 2_000_000; offset < 2_400_000; offset += 50_000) reads.push([offset, 50_000]);
        for (const [offset, length] of reads) assert.deepEqual(await source.read(offset, length), data.subarray(offset, offset + length), `${length} bytes at ${offset}`);
        const together = await Promise.all(reads.map(([offset, length]) => source.read(offset, length)));
        together.forEach((bytes, i) => assert.deepEqual(bytes, data.subarray(reads[i]![0], reads[i]![0] + reads[i]![1])));
        await assert.rejects(source.read(data.length - 10, 11), RangeError);
      } finally {
        await source.close();
      }
      await assert.rejects(store.openSource('uploads/tmp_missing'), isCode('not_found'));
    });

    test('unsafe keys are refused before any I/O', async () => {
      for (const key of ['../escape', '/absolute', 'a//b', 'uploads/../../x', '.tmp/x', '', 'a/./b', 'sp ace', 'nul\0']) {
        await assert.rejects(store.put(key, Readable.from([Buffer.from('x')])), isCode('invalid_request'), key);
        await assert.rejects(store.stat(key), isCode('invalid_request'), key);
      }
      // The store still works for a safe key.
      await store.put('uploads/tmp_safe', body(10).stream);
      assert.equal(await text(await store.get('uploads/tmp_safe', { start: 0, end: 0 })).then((s) => s.length), 1);
    });
  });
}
