// Rate limits: per API key (429 rate_limited with Retry-After), per client address on public
// routes (429 address_rate_limited page), and the failure throttle behind install-link passwords.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FailureThrottle } from '../../src/http/limits.ts';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { Api } from '../support/api-client.ts';
import { startTestServer } from '../support/server.ts';

it('locks a key after `max` failures in a window, doubling each further lockout, and forgives a success', () => {
  let now = 0;
  const throttle = new FailureThrottle({ max: 3, windowMs: 1000, maxLockoutMs: 60_000, now: () => now });
  assert.deepEqual([throttle.fail('k'), throttle.fail('k')], [0, 0]);
  assert.equal(throttle.blockedFor('k'), 0);
  assert.equal(throttle.fail('k'), 1000, 'third failure: locked for one window');
  assert.equal(throttle.blockedFor('k'), 1000);
  assert.equal(throttle.blockedFor('other'), 0, 'keys are independent');
  now = 1000;
  assert.equal(throttle.blockedFor('k'), 0);
  assert.deepEqual([throttle.fail('k'), throttle.fail('k'), throttle.fail('k')], [0, 0, 2000], 'the second lockout is twice as long');
  now = 3000;
  assert.deepEqual([throttle.fail('k'), throttle.fail('k'), throttle.fail('k')], [0, 0, 4000]);
  throttle.succeed('k');
  assert.equal(throttle.blockedFor('k'), 0);
  assert.deepEqual([throttle.fail('k'), throttle.fail('k'), throttle.fail('k')], [0, 0, 1000], 'a success starts over');
  now = 1_000_000;
  throttle.fail('k');
  throttle.fail('k');
  assert.equal(throttle.fail('k'), 1000, 'a long quiet period forgives past lockouts');
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
    assert.equal((await api.as(null).get('/healthz')).status, 200, 'probes are not limited');
  } finally {
    await server.close();
  }
});

it('limits public routes per client address with a 429 page naming the code', async () => {
  const server = await startTestServer({ name: 'public-rate', env: { SIGNET_PUBLIC_RATE_LIMIT: '5/min' }, overrides: { signers: [] } });
  try {
    const anonymous = new Api(server.url, null);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await anonymous.get('/d/no-such-link/qr.png')).status);
    assert.deepEqual(statuses, [404, 404, 404, 404, 404, 429, 429]);
    const limited = await anonymous.get('/d/no-such-link/qr.png');
    assert.equal(limited.headers.get('signet-error'), 'address_rate_limited');
    assert.match(String(limited.headers.get('content-type')), /text\/html/);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.match(limited.body, /Too many requests/);
    assert.equal((await anonymous.get('/healthz')).status, 200);
  } finally {
    await server.close();
  }
});
