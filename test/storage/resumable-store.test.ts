// The disk resumable (tus) store: a finished upload is handed over as its local file with the
// SHA-256 hashed while its PATCH bodies were written, or without one when this process did not
// see every byte (a restart mid-upload), so the blob store then hashes the file itself.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Upload } from '@tus/server';
import { openResumableStore } from '../../src/storage/resumable-store.ts';
import { loadConfig } from '../../src/config.ts';

let dataDir = '';
before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'signet-resumable-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

const open = () => openResumableStore({ ...loadConfig({ SIGNET_DATA_DIR: dataDir }), storage: 'disk' }, 60_000);
const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) & 0xff));
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('resumable store on disk', () => {
  it('hashes the PATCH bodies as they are written; finishedFile hands over the file and its digest', async () => {
    const store = await open();
    await store.datastore.create(new Upload({ id: 'acc_a.one', size: bytes.length, offset: 0 }));
    const half = await store.datastore.write(Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000, 150_000)]), 'acc_a.one', 0);
    assert.equal(half, 150_000);
    assert.equal(await store.datastore.write(Readable.from([bytes.subarray(150_000)]), 'acc_a.one', half), bytes.length);
    const file = store.finishedFile('acc_a.one', bytes.length);
    assert.deepEqual(file, { path: path.join(dataDir, 'uploads-resumable', 'acc_a.one'), sha256: sha256(bytes) });
    assert.deepEqual(await readFile(file!.path), bytes);
    await store.forget('acc_a.one');
    assert.equal(existsSync(file!.path), false);
    await assert.rejects(store.datastore.getUpload('acc_a.one'));
  });

  it('has no digest for an upload begun before a restart, or when the size does not match', async () => {
    const before = await open();
    await before.datastore.create(new Upload({ id: 'acc_a.two', size: bytes.length, offset: 0 }));
    const half = await before.datastore.write(Readable.from([bytes.subarray(0, 100_000)]), 'acc_a.two', 0);
    const restarted = await open();
    assert.equal(await restarted.datastore.write(Readable.from([bytes.subarray(half)]), 'acc_a.two', half), bytes.length);
    assert.equal(restarted.finishedFile('acc_a.two', bytes.length)?.sha256, null);
    assert.deepEqual(await readFile(path.join(dataDir, 'uploads-resumable', 'acc_a.two')), bytes);
    // The process that saw the first half has a digest of 100,000 bytes only: none for the whole.
    assert.equal(before.finishedFile('acc_a.two', bytes.length)?.sha256, null);
    await restarted.forget('acc_a.two');
  });

  it('never gives a wrong digest after a failed write at the start (the next write at 0 starts it anew)', async () => {
    const store = await open();
    await store.datastore.create(new Upload({ id: 'acc_a.three', size: bytes.length, offset: 0 }));
    async function* failing() {
      yield bytes.subarray(0, 50_000);
      throw new Error('client went away');
    }
    await assert.rejects(store.datastore.write(Readable.from(failing()), 'acc_a.three', 0));
    const offset = (await store.datastore.getUpload('acc_a.three')).offset;
    assert.equal(await store.datastore.write(Readable.from([bytes.subarray(offset)]), 'acc_a.three', offset), bytes.length);
    // Never a wrong digest: none when the failed write left bytes the hash may not match; a
    // correct one when nothing of it reached the file (the next write then starts at 0 anew).
    assert.equal(store.finishedFile('acc_a.three', bytes.length)?.sha256, offset === 0 ? sha256(bytes) : null, `offset ${offset}`);
    await store.forget('acc_a.three');
  });

  it('forgets the digest when a failed write left part of its bytes in the file', async () => {
    const store = await open();
    await store.datastore.create(new Upload({ id: 'acc_a.four', size: bytes.length, offset: 0 }));
    const first = await store.datastore.write(Readable.from([bytes.subarray(0, 100_000)]), 'acc_a.four', 0);
    async function* failing() {
      yield bytes.subarray(first, first + 50_000);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the chunk reaches the file first
      throw new Error('client went away');
    }
    await assert.rejects(store.datastore.write(Readable.from(failing()), 'acc_a.four', first));
    const offset = (await store.datastore.getUpload('acc_a.four')).offset;
    assert.equal(offset, first + 50_000, 'the failed write left its first chunk');
    assert.equal(await store.datastore.write(Readable.from([bytes.subarray(offset)]), 'acc_a.four', offset), bytes.length);
    assert.equal(store.finishedFile('acc_a.four', bytes.length)?.sha256, null);
    assert.deepEqual(await readFile(path.join(dataDir, 'uploads-resumable', 'acc_a.four')), bytes);
    await store.forget('acc_a.four');
  });
});
