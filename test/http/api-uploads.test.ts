// POST /v1/apps/upload, authentication, the error envelope, routing errors and the ops routes,
// over a real listening server.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildZip } from '../support/zip-builder.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk, tinyIpa } from '../support/app-packages.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let api: Api;

before(async () => {
  server = await startTestServer({ name: 'uploads', overrides: { signers: [] } });
  api = new Api(server.url, server.key);
});
after(() => server.close());

function assertError(response: { status: number; body: any }, status: number, code: string): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'error', 'message']);
  assert.equal(response.body.code, status);
  assert.equal(response.body.error, code);
  assert.equal(typeof response.body.message, 'string');
}

describe('upload', () => {
  it('stores an APK and reports its identity, size and sha256', async () => {
    const apk = tinyApk({ packageName: 'com.acme.app', versionName: '3.1', versionCode: 31, label: 'Acme' });
    const response = await api.upload('Acme.APK', apk);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.code, 200);
    const data = response.body.data;
    assert.match(data.file_key, /^tmp_[A-Za-z0-9_-]{24,}$/);
    assert.equal(data.file_name, 'Acme.APK');
    assert.equal(data.size, apk.length);
    assert.equal(data.sha256, (await import('node:crypto')).createHash('sha256').update(apk).digest('hex'));
    assert.equal(data.platform, 'android');
    assert.equal(data.bundle_id, 'com.acme.app');
    assert.equal(data.name, 'Acme');
    assert.equal(data.version, '3.1');
    assert.equal(data.build, '31');
    assert.match(data.app_id, /^app_/);
    const ttl = Date.parse(data.expires_at) - Date.parse(data.created_at);
    assert.ok(Math.abs(ttl - 86_400_000) < 5000, `file_key lives ${ttl} ms`);
  });

  it('stores an IPA', async () => {
    const response = await api.upload('Example.ipa', tinyIpa({ bundleId: 'com.acme.ios', version: '5.0', build: '500' }));
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.data.platform, 'ios');
    assert.equal(response.body.data.bundle_id, 'com.acme.ios');
    assert.equal(response.body.data.build, '500');
  });

  it('refuses other extensions with 415 unsupported_file_type', async () => {
    assertError(await api.upload('app.zip', tinyApk()), 415, 'unsupported_file_type');
    assertError(await api.upload('app.ipa.txt', tinyIpa()), 415, 'unsupported_file_type');
  });

  it('refuses files that are not app packages with 422 invalid_package and the reason', async () => {
    const notZip = await api.upload('broken.apk', Buffer.from('definitely not a zip file'));
    assertError(notZip, 422, 'invalid_package');
    const noApp = await api.upload('empty.ipa', buildZip([{ name: 'README.txt', data: 'hello' }]).bytes);
    assertError(noApp, 422, 'invalid_package');
    const crossed = await api.upload('android.ipa', tinyApk());
    assertError(crossed, 422, 'invalid_package');
    assert.match(crossed.body.message, /Android app/);
  });

  it('leaves nothing on disk after a refused upload', async () => {
    await api.upload('broken.apk', Buffer.from('not a zip'));
    const uploads = path.join(server.dataDir, 'blobs', 'uploads');
    const stored = existsSync(uploads) ? readdirSync(uploads) : [];
    const { count } = (await server.service.db.kysely.selectFrom('uploads').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow());
    assert.equal(stored.length, Number(count), `blobs ${stored.join(',')} vs ${count} rows`);
  });

  it('accepts a file of exactly the size limit sent with ordinary part headers and notes', async () => {
    const limited = await startTestServer({ name: 'uploads-limit', env: { SIGNET_MAX_UPLOAD_BYTES: String(tinyApk().length) }, overrides: { signers: [] } });
    try {
      const response = await new Api(limited.url, limited.key).form('/v1/apps/upload', { notes: 'n'.repeat(10_000), file: { name: 'exact.apk', data: tinyApk() } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const over = await new Api(limited.url, limited.key).upload('over.apk', Buffer.concat([tinyApk(), Buffer.alloc(1)]));
      assert.equal(over.status, 413);
    } finally {
      await limited.close();
    }
  });

  it('needs a multipart body with the field "file"', async () => {
    assertError(await api.form('/v1/apps/upload', { other: { name: 'a.apk', data: tinyApk() } }), 400, 'invalid_request');
    assertError(await api.form('/v1/apps/upload', { note: 'no file' }), 400, 'invalid_request');
    assertError(await api.post('/v1/apps/upload', { file: 'x' }), 415, 'unsupported_media_type');
  });
});

describe('authentication', () => {
  it('answers 401 with WWW-Authenticate for a missing, malformed or unknown key', async () => {
    for (const key of [null, 'sk_short', `sk_${'a'.repeat(43)}`]) {
      const response = await api.as(key).get('/v1/tasks');
      assertError(response, 401, 'unauthorized');
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    const basic = await api.as(null).get('/v1/tasks', { authorization: 'Basic dXNlcjpwYXNz' });
    assertError(basic, 401, 'unauthorized');
  });

  it('gives every response a request id, and keeps a well-formed one from the client', async () => {
    const mine = await api.get('/healthz', { 'x-request-id': 'build-1234-abcd' });
    assert.equal(mine.headers.get('x-request-id'), 'build-1234-abcd');
    const generated = await api.get('/healthz', { 'x-request-id': 'bad id with spaces' });
    assert.match(generated.headers.get('x-request-id') ?? '', /^req_/);
  });
});

describe('routing errors', () => {
  it('answers unknown routes with 404 not_found and wrong methods with 405 method_not_allowed', async () => {
    assertError(await api.get('/v1/nothing-here'), 404, 'not_found');
    const wrong = await api.request('DELETE', '/v1/tasks');
    assertError(wrong, 405, 'method_not_allowed');
    assert.equal(wrong.headers.get('allow'), 'GET');
  });
});

describe('operations', () => {
  it('serves /healthz and /readyz without a key', async () => {
    const health = await api.as(null).get('/healthz');
    assert.deepEqual([health.status, health.body], [200, { status: 'ok' }]);
    const ready = await api.as(null).get('/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready', checks: { database: 'ok', storage: 'ok' } });
  });

  it('describes every route, body and error in /v1/openapi.json', async () => {
    const response = await api.as(null).get('/v1/openapi.json');
    assert.equal(response.status, 200);
    const doc = response.body;
    assert.equal(doc.info.version, '1.0.2');
    // The public base URL with the port the server really listens on (not the configured 0).
    assert.equal(doc.servers[0].url, `http://localhost:${new URL(server.url).port}/v1`);
    const routes = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, item]) =>
      Object.keys(item).filter((m) => m !== 'servers').map((m) => `${m.toUpperCase()} ${p}`),
    );
    for (const route of [
      'POST /apps/upload', 'GET /apps', 'GET /apps/{app_id}', 'POST /tasks/create', 'GET /tasks', 'GET /tasks/{task_id}',
      'POST /tasks/{task_id}/cancel', 'GET /tasks/{task_id}/artifact', 'POST /certificates', 'GET /certificates',
      'GET /certificates/{certificate_id}', 'DELETE /certificates/{certificate_id}', 'GET /healthz', 'GET /readyz', 'GET /openapi.json', 'GET /tasks/{task_id}/events', 'POST /uploads', 'PATCH /uploads/{upload_id}',
    ]) {
      assert.ok(routes.includes(route), `${route} missing from ${routes.join(', ')}`);
    }
    const create = doc.paths['/tasks/create'].post;
    assert.deepEqual(create.requestBody.content['application/json'].schema.required.sort(), ['cert_type', 'file_key']);
    assert.match(create.responses['404'].description, /file_key_not_found/);
    assert.match(create.responses['422'].description, /cert_type_unsupported/);
    assert.deepEqual(create.security, [{ bearer: [] }, { session: [] }], 'an API key or the console session');
    assert.equal(create['x-scope'], 'tasks:write');
    assert.deepEqual(doc.paths['/apps/upload'].post.requestBody.content['multipart/form-data'].schema.required, ['file']);
    assert.ok(doc.paths['/certificates'].post.requestBody.content['multipart/form-data'].schema.properties.profile);
    assert.deepEqual(doc.paths['/healthz'].get.security, []);
    assert.ok(doc['x-error-catalogue'].some((e: any) => e.code === 'file_too_large' && e.status === 413));
  });

  it('shows real response schemas: described responses, literal unions as enums, the listening server URL', async () => {
    const doc = (await api.as(null).get('/v1/openapi.json')).body;
    const servers = new URL(doc.servers[0].url);
    assert.equal(servers.port, new URL(server.url).port, `the listening port, not 0: ${doc.servers[0].url}`);
    assert.equal(servers.pathname, '/v1');
    const describedAs = new Set<string>();
    for (const item of Object.values(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(item)) if (method !== 'servers') for (const response of Object.values(operation.responses ?? {}) as any[]) describedAs.add(response.description);
    }
    assert.ok(!describedAs.has('Default Response'), 'no "Default Response"');
    const create = doc.paths['/tasks/create'].post;
    assert.equal(create.responses['200'].description, 'OK');
    assert.deepEqual(create.requestBody.content['application/json'].schema.properties.cert_type.enum, ['enterprise', 'super']);
    assert.equal(create.requestBody.content['application/json'].schema.properties.cert_type.type, 'string');
    assert.deepEqual(create.responses['200'].content['application/json'].schema.properties.data.properties.status.enum, ['pending', 'processing', 'succeeded', 'failed', 'canceled']);
  });

  it('serves the API reference at /docs with swagger-ui, from its own files, under the strict CSP', async () => {
    const page = await api.as(null).get('/docs');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.body, /<title>Signet API reference<\/title>/);
    const scripts = [...String(page.body).matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(scripts.some((src) => src.endsWith('/swagger-ui-bundle.js')), scripts.join(','));
    for (const src of scripts) {
      const asset = await fetch(new URL(src, `${server.url}/docs`));
      assert.equal(asset.status, 200, src);
    }
    const csp = String(page.headers.get('content-security-policy'));
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const shown = (await api.as(null).get('/docs/json')).body;
    assert.deepEqual(shown, (await api.as(null).get('/v1/openapi.json')).body, 'the viewer shows /v1/openapi.json');
  });
});
