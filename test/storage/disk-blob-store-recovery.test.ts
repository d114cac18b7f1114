// Disk-store behaviour beyond the shared contract: recovery from a process killed mid-upload.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DiskBlobStore } from '../../src/storage/disk-blob-store.ts';

test('opening the disk store removes temp files abandoned by a killed process, not live ones', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'signet-blobs-'));
  try {
    await mkdir(path.join(root, '.tmp'));
    const abandoned = path.join(root, '.tmp', 'abandoned.part');
    const live = path.join(root, '.tmp', 'live.part');
    await writeFile(abandoned, 'half an upload');
    await writeFile(live, 'an upload in progress');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(abandoned, twoHoursAgo, twoHoursAgo);
    const store = await DiskBlobStore.open({ root });
    assert.deepEqual(await readdir(path.join(root, '.tmp')), ['live.part']);
    await store.close();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
