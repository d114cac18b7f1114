import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { openBlobStore } from '../../src/storage/open-blob-store.ts';

test('openBlobStore keeps disk blobs under the data dir and builds the S3 store from SIGNET_S3_*', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'signet-open-blobs-'));
  try {
    const disk = await openBlobStore(loadConfig({ SIGNET_DATA_DIR: dataDir }));
    assert.equal(disk.kind, 'disk');
    assert.ok((await stat(path.join(dataDir, 'blobs'))).isDirectory());
    await disk.close();
    const s3 = await openBlobStore(
      loadConfig({ SIGNET_DATA_DIR: dataDir, SIGNET_STORAGE: 's3', SIGNET_S3_BUCKET: 'b', SIGNET_S3_ENDPOINT: 'http://127.0.0.1:9' }),
    );
    assert.equal(s3.kind, 's3');
    await s3.close();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
