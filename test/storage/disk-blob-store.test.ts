import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DiskBlobStore } from '../../src/storage/disk-blob-store.ts';
import { describeBlobStoreContract } from './blob-store.contract.ts';

let root = '';
describeBlobStoreContract({
  name: 'disk',
  async open() {
    root = await mkdtemp(path.join(tmpdir(), 'signet-blobs-'));
    return DiskBlobStore.open({ root });
  },
  // Temp files live in the process's own folder under .tmp; its owner marker is not a leftover.
  leftovers: async () => (await readdir(path.join(root, '.tmp'), { recursive: true, withFileTypes: true })).filter((e) => e.isFile() && e.name !== 'owner.json').map((e) => e.name),
  cleanup: () => rm(root, { recursive: true, force: true }),
});

describe('DiskBlobStore.adoptFile', () => {
  test('renames a file on the same file system (the same inode: no copy is written)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'signet-adopt-same-'));
    const store = await DiskBlobStore.open({ root: path.join(dir, 'blobs') });
    try {
      const file = path.join(dir, 'finished');
      await writeFile(file, 'an app');
      const { ino } = await stat(file);
      assert.equal((await store.adoptFile(file, 'uploads/tmp_same')).size, 6);
      assert.equal((await stat(path.join(dir, 'blobs', 'uploads', 'tmp_same'))).ino, ino);
      assert.equal(((await stat(path.join(dir, 'blobs', 'uploads', 'tmp_same'))).mode & 0o777), 0o600);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  // /dev/shm is a tmpfs on Linux: a rename from there into the store fails with EXDEV.
  const shm = '/dev/shm';
  const otherDevice = existsSync(shm) && statSync(shm).dev !== statSync(tmpdir()).dev;
  test('copies a file from another file system (EXDEV), then removes it', { skip: otherDevice ? false : 'no second file system (/dev/shm) here' }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'signet-adopt-exdev-'));
    const away = await mkdtemp(path.join(shm, 'signet-adopt-'));
    const store = await DiskBlobStore.open({ root: dir });
    try {
      const data = Buffer.alloc(1024 * 1024 + 3, 7);
      const file = path.join(away, 'finished');
      await writeFile(file, data);
      const result = await store.adoptFile(file, 'uploads/tmp_exdev');
      assert.deepEqual(result, { size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
      assert.deepEqual(await readFile(path.join(dir, 'uploads', 'tmp_exdev')), data);
      assert.equal(existsSync(file), false);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
      await rm(away, { recursive: true, force: true });
    }
  });
});
