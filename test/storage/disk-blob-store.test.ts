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
  leftovers: () => readdir(path.join(root, '.tmp')),
  cleanup: () => rm(root, { recursive: true, force: true }),
});
