// Disk-store behaviour beyond the shared contract: recovery from a process killed mid-upload.
// Partial uploads live in a folder owned by their process; opening the store removes the folders
// of dead processes whatever their age, keeps live ones, and removes unowned files (older
// releases) once they are an hour old.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DiskBlobStore } from '../../src/storage/disk-blob-store.ts';

test('opening the disk store removes temp files abandoned by a killed process, not live ones', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'signet-blobs-'));
  try {
    const temp = path.join(root, '.tmp');
    await mkdir(temp);
    const child = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => child.once('exit', resolve));
    const owned = async (name: string, pid: number) => {
      await mkdir(path.join(temp, name));
      await writeFile(path.join(temp, name, 'owner.json'), JSON.stringify({ host: os.hostname(), bootId: null, pid, pidStart: null, createdAt: new Date().toISOString() }));
      await writeFile(path.join(temp, name, 'upload.part'), 'half an upload');
    };
    await owned('dead-process', child.pid!);
    await owned('live-process', process.pid);
    const legacyOld = path.join(temp, 'abandoned.part');
    await writeFile(legacyOld, 'half an upload from an older release');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(legacyOld, twoHoursAgo, twoHoursAgo);
    await writeFile(path.join(temp, 'recent.part'), 'an unowned file written just now');
    const store = await DiskBlobStore.open({ root });
    const left = (await readdir(temp)).sort();
    assert.ok(!left.includes('dead-process') && !left.includes('abandoned.part'), left.join(', '));
    assert.ok(left.includes('live-process') && left.includes('recent.part'), left.join(', '));
    await store.close();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
