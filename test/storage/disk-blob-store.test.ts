import { mkdtemp, readdir, rm } from 'node:fs/promises';
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
