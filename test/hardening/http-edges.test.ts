// Issue 12, the HTTP side: the seven inputs that answered 500, fastify's and Node's own errors in
// the catalogue, strict bodies (unknown fields, no coercion in PATCH), security headers on pages,
// password brute force, quotas, and /metrics.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_CATALOGUE } from '../../src/errors.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { distributionFixture, type DistributionFixture } from '../support/distribution.ts';
import { rawRequest } from '../support/raw-http.ts';

const catalogued = (body: any, code: string) => {
  assert.equal(body.error, code, JSON.stringify(body));
  assert.ok(code in ERROR_CATALOGUE);
  assert.equal(typeof body.message, 'string');
};

let fixture: DistributionFixture;
let api: Api;
let slug: string;
let distributionId: string;
let host: string;

before(async () => {
  fixture = await distributionFixture('http-edges', { SIGNET_PASSWORD_ATTEMPTS: '3/2s', SIGNET_QUOTA_PENDING_TASKS: '3', SIGNET_METRICS_TOKEN: 'metrics-secret-token' });
  api = fixture.api;
  const { distribution } = await fixture.release('edges.apk', tinyApk({ packageName: 'com.example.edges' }));
  slug = distribution.url.split('/d/')[1];
  distributionId = distribution.id;
  host = new URL(fixture.server.url).host;
});
after(() => fixture.close());

describe('the seven inputs that answered 500', () => {
  const auth = () => `Authorization: Bearer ${fixture.server.key}`;
  it('multipart without a boundary, a wrong boundary, truncated parts, a file part without filename', async () => {
    const cases: Array<[string, string, string]> = [
      ['multipart/form-data', 'raw body, no boundary at all', 'invalid_request'],
      ['multipart/form-data; boundary=XYZ', '--ABC\r\nContent-Disposition: form-data; name="file"; filename="a.apk"\r\n\r\nPK\r\n--ABC--\r\n', 'invalid_request'],
      ['multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.apk"\r\n\r\nPK\x03\x04 truncated', 'invalid_request'],
      ['multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.apk"\r\n\r\nPK\x03\x04 truncated\r\n--XYZ', 'invalid_request'],
      ['multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="file"\r\n\r\nPK\x03\x04\r\n--XYZ--\r\n', 'invalid_request'],
      ['multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.apk"\r\n\r\nPK\r\n--XYZ--\r\n', 'invalid_request'],
    ];
    for (const [type, body] of cases) {
      for (const path of ['/v1/apps/upload', '/v1/certificates']) {
        const response = await rawRequest(fixture.server.url, `POST ${path} HTTP/1.1\nHost: ${host}\n${auth()}\nContent-Type: ${type}\nContent-Length: ${Buffer.byteLength(body)}`, body);
        assert.ok(response.status >= 400 && response.status < 500, `${path} ${type} ${JSON.stringify(body)} → ${response.status} ${response.body}`);
        assert.ok(JSON.parse(response.body).error in ERROR_CATALOGUE, response.body);
      }
    }
  });

  it('POST /d/<slug> with text/plain (415) and a form over 4 KiB (413) answer HTML pages with Signet-Error', async () => {
    const plain = await api.as(null).request('POST', `/d/${slug}`, { body: 'password=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(plain.status, 415);
    assert.equal(plain.headers.get('signet-error'), 'unsupported_media_type');
    assert.match(String(plain.headers.get('content-type')), /text\/html/);
    const big = await api.as(null).request('POST', `/d/${slug}`, { body: `password=${'x'.repeat(5000)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(big.status, 413);
    assert.equal(big.headers.get('signet-error'), 'body_too_large');
    const unknown = await api.as(null).request('POST', `/d/${slug}`, { body: 'pasword=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.headers.get('signet-error'), 'invalid_request');
    assert.match(unknown.body, /pasword is not a known field/);
  });
});

describe("fastify's and Node's own errors", () => {
  it('bad percent-encoding, over-long ids, huge headers and malformed requests carry catalogue codes', async () => {
    const bad = await api.get('/v1/tasks/%ff');
    assert.equal(bad.status, 400);
    catalogued(bad.body, 'invalid_request');
    const long = await api.get(`/v1/tasks/tsk_${'a'.repeat(300)}`);
    assert.equal(long.status, 414);
    catalogued(long.body, 'uri_too_long');
    const page = await api.as(null).get('/d/%ff');
    assert.equal(page.headers.get('signet-error'), 'invalid_request');
    const missing = await api.as(null).get('/d/x/y/z');
    assert.equal(missing.headers.get('signet-error'), 'not_found');
    const huge = await rawRequest(fixture.server.url, `GET /healthz HTTP/1.1\nHost: ${host}\nX-Big: ${'a'.repeat(20_000)}`);
    assert.equal(huge.status, 431);
    catalogued(JSON.parse(huge.body), 'headers_too_large');
    assert.ok(huge.closed);
    const garbage = await rawRequest(fixture.server.url, 'NOT HTTP AT ALL');
    assert.equal(garbage.status, 400);
    catalogued(JSON.parse(garbage.body), 'invalid_request');
  });

  it('answers an unauthenticated POST and closes its connection without reading the body', async () => {
    const response = await rawRequest(fixture.server.url, `POST /v1/tasks/create HTTP/1.1\nHost: ${host}\nContent-Type: application/json\nContent-Length: 1000000`, '{"file_key":');
    assert.equal(response.status, 401);
    assert.equal(response.headers.connection, 'close');
    assert.ok(response.closed, 'the socket was closed');
  });

  it('answers 413 to an upload whose Content-Length is over the limit before reading its body', async () => {
    const started = performance.now();
    const response = await rawRequest(
      fixture.server.url,
      `POST /v1/apps/upload HTTP/1.1\nHost: ${host}\nAuthorization: Bearer ${fixture.server.key}\nContent-Type: multipart/form-data; boundary=B\nContent-Length: ${2 * 1024 ** 3 + 128 * 1024}`,
      '--B\r\nContent-Disposition: form-data; name="file"; filename="big.apk"\r\n\r\n',
    );
    assert.equal(response.status, 413);
    catalogued(JSON.parse(response.body), 'file_too_large');
    assert.ok(response.closed);
    assert.ok(performance.now() - started < 2000);
  });
});

describe('strict input', () => {
  it('refuses unknown JSON fields by name instead of ignoring them', async () => {
    const upload = await api.upload('s.apk', tinyApk());
    const response = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise', certficate_id: 'crt_x' });
    assert.equal(response.status, 400);
    catalogued(response.body, 'invalid_request');
    assert.match(response.body.message, /certficate_id is not a known field/);
    const query = await api.get('/v1/tasks?stauts=failed');
    assert.equal(query.status, 400);
    assert.match(query.body.message, /stauts is not a known query parameter/);
  });

  it('does not coerce types in PATCH', async () => {
    for (const body of [{ max_downloads: true }, { max_downloads: '5' }, { max_downloads: 1e300 }, { max_downloads: 1.5 }, { password: 12345 }, { enabled: 'false' }, { expires_at: 5 }]) {
      const response = await api.request('PATCH', `/v1/distributions/${distributionId}`, { json: body });
      assert.equal(response.status, 400, `${JSON.stringify(body)} → ${response.status}`);
      catalogued(response.body, 'invalid_request');
    }
    const ok = await api.request('PATCH', `/v1/distributions/${distributionId}`, { json: { max_downloads: 5 } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.data.max_downloads, 5);
    const reset = await api.request('PATCH', `/v1/distributions/${distributionId}`, { json: { max_downloads: null } });
    assert.equal(reset.body.data.max_downloads, null);
  });

  it('refuses callback URLs without a host or pointing at private addresses when the task is created', async () => {
    const fileKey = (await api.upload('c.apk', tinyApk())).body.data.file_key;
    for (const callback of ['http://', 'ftp://example.com/x', 'http://127.0.0.1:8080/hook', 'http://0x7f000001/', 'http://2130706433/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/']) {
      const response = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', callback_url: callback });
      assert.equal(response.status, 400, `${callback} → ${response.status}`);
      catalogued(response.body, 'invalid_request');
    }
  });
});

describe('public pages', () => {
  it('send security headers: a CSP without unhashed inline code, no framing, nosniff, no referrer', async () => {
    const ipad = { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15' };
    for (const path of [`/d/${slug}`, '/d/missing-link', '/d/x/y/z', `/d/${slug}/qr.svg`, '/docs']) {
      const response = await api.as(null).get(path, ipad);
      const csp = String(response.headers.get('content-security-policy'));
      // Every inline <script> and <style> the page carries is allowed by its hash, nothing else.
      for (const [, tag, body] of String(response.body).matchAll(/<(script|style)>([\s\S]*?)<\/\1>/g)) {
        const hash = `'sha256-${createHash('sha256').update(body!, 'utf8').digest('base64')}'`;
        assert.ok(csp.includes(hash), `${path}: inline ${tag} not in the CSP`);
      }
      assert.match(csp, /frame-ancestors 'none'/, path);
      // Scripts come from Signet's own files only: no inline script is allowed at all.
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(response.headers.get('strict-transport-security'), null, 'no HSTS over plain http');
    }
  });

  it('locks a link after too many wrong passwords (429 page, no scrypt), and the right one works after the lockout', async () => {
    const patched = await api.request('PATCH', `/v1/distributions/${distributionId}`, { json: { password: 'right-password' } });
    assert.equal(patched.status, 200);
    const visitor = api.as(null);
    const guess = (password: string) => visitor.request('POST', `/d/${slug}`, { body: new URLSearchParams({ password }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await guess(`wrong-${i}`)).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    const locked = await guess('right-password');
    assert.equal(locked.status, 429, 'even the right password waits out the lockout');
    assert.equal(locked.headers.get('signet-error'), 'password_attempts_exceeded');
    assert.ok(Number(locked.headers.get('retry-after')) >= 1);
    assert.match(locked.body, /Too many attempts/);
    await sleep(Number(locked.headers.get('retry-after')) * 1000 + 100);
    const unlocked = await fetch(`${fixture.server.url}/d/${slug}`, { method: 'POST', body: 'password=right-password', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
    assert.equal(unlocked.status, 303);
    await api.request('PATCH', `/v1/distributions/${distributionId}`, { json: { password: null } });
  });
});

describe('quotas and metrics', () => {
  it('refuses pending tasks past the account quota with 429 task_quota_exceeded', async () => {
    // The fixture's signer finishes tasks quickly; twelve creations at once outrun it.
    const fileKey = (await api.upload('q.apk', tinyApk())).body.data.file_key;
    const statuses: number[] = [];
    const bodies: any[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        const response = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' });
        statuses.push(response.status);
        bodies.push(response.body);
      }),
    );
    const refused = bodies.filter((b) => b.error === 'task_quota_exceeded');
    assert.ok(refused.length > 0, `statuses ${statuses.join(',')}`);
    assert.ok(statuses.every((s) => s === 200 || s === 429));
    catalogued(refused[0], 'task_quota_exceeded');
  });

  it('serves Prometheus metrics only with the token', async () => {
    assert.equal((await api.as(null).get('/metrics')).status, 401);
    assert.equal((await api.as('wrong-token').get('/metrics')).status, 401);
    const metrics = await api.as('metrics-secret-token').get('/metrics');
    assert.equal(metrics.status, 200);
    for (const name of ['signet_http_request_duration_seconds_bucket', 'signet_tasks{state="succeeded"}', 'signet_queue_depth', 'signet_signing_duration_seconds_count', 'signet_upload_bytes_total', 'signet_rate_limit_refusals_total']) {
      assert.ok(metrics.body.includes(name), `${name} in\n${metrics.body.slice(0, 500)}`);
    }
    assert.match(metrics.body, /signet_http_request_duration_seconds_count\{method="GET",route="\/v1\/tasks\/:task_id"/);
  });
});
