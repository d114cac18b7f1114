// Per-account storage quota: uploads past it are refused with 413 storage_quota_exceeded, before
// the body is read when Content-Length already says so, and another account is not affected.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { Api, streamUpload } from '../support/api-client.ts';
import { patternStream, tinyApk } from '../support/app-packages.ts';
import { startTestServer } from '../support/server.ts';

it('refuses uploads past the account storage quota, up front when the size is declared', async () => {
  // Room for three and a half packages: the fourth does not fit.
  const apk = tinyApk();
  const server = await startTestServer({ name: 'storage-quota', env: { SIGNET_QUOTA_STORAGE_BYTES: String(apk.length * 3 + Math.floor(apk.length / 2)) }, overrides: { signers: [] } });
  try {
    const api = new Api(server.url, server.key);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await api.upload(`q${i}.apk`, apk)).status);
    assert.deepEqual(statuses, [200, 200, 200, 413]);
    const refused = await api.upload('q.apk', apk);
    assert.equal(refused.body.error, 'storage_quota_exceeded');
    // A declared size beyond what is free: refused before the body is read.
    const other = new Api(server.url, (await new ApiKeyService(server.service.db.repos).create('other')).key);
    const big = await streamUpload(server.url, other.key!, 'big.apk', 64 * 1024 * 1024, patternStream(64 * 1024 * 1024));
    assert.equal(big.status, 413);
    assert.equal(big.body.error, 'storage_quota_exceeded');
    assert.equal((await other.upload('small.apk', apk)).status, 200, 'another account has its own quota');
  } finally {
    await server.close();
  }
});
