// Per-key token buckets: the unit, and 429 rate_limited with Retry-After over HTTP.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { TokenBuckets } from '../../src/http/rate-limit.ts';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { Api } from '../support/api-client.ts';
import { startTestServer } from '../support/server.ts';

it('refills continuously up to the burst size', () => {
  let now = 0;
  const buckets = new TokenBuckets({ perSecond: 2, burst: 3 }, () => now);
  assert.deepEqual([buckets.take('k'), buckets.take('k'), buckets.take('k')], [0, 0, 0]);
  assert.equal(buckets.take('k'), 0.5);
  assert.equal(buckets.take('other'), 0, 'buckets are per key');
  now = 500;
  assert.equal(buckets.take('k'), 0);
  now = 100_000;
  assert.deepEqual([buckets.take('k'), buckets.take('k'), buckets.take('k')], [0, 0, 0]);
  assert.ok(buckets.take('k') > 0, 'never more than the burst');
});

it('answers 429 rate_limited with Retry-After per API key', async () => {
  const server = await startTestServer({ name: 'rate', env: { SIGNET_RATE_LIMIT: '0.5/s,3' }, overrides: { signers: [] } });
  try {
    const api = new Api(server.url, server.key);
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await api.get('/v1/tasks')).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const limited = await api.get('/v1/tasks');
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { code: 429, error: 'rate_limited', message: limited.body.message });
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const other = new Api(server.url, (await new ApiKeyService(server.service.db.repos).create('other')).key);
    assert.equal((await other.get('/v1/tasks')).status, 200, 'another key has its own bucket');
    assert.equal((await api.as(null).get('/healthz')).status, 200, 'public routes are not limited');
  } finally {
    await server.close();
  }
});
