// Resumable uploads (tus 1.0 at /v1/uploads): creation, offsets and resumption, termination,
// ownership per account, the 2 GiB limit at creation, and a finished upload answering exactly
// like POST /v1/apps/upload.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let api: Api;
let otherKey: string;

before(async () => {
  // Unfinished uploads expire after 4 s here (SIGNET_FILE_KEY_TTL in production), swept every 200 ms.
  server = await startTestServer({ name: 'resumable', overrides: { signers: [], resumable: { expirationMs: 4000, sweepIntervalMs: 200 } } });
  api = new Api(server.url, server.key);
  otherKey = (await new ApiKeyService(server.service.db.repos).create('other-account', 'test')).key;
});
after(() => server.close());

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

function tus(method: string, url: string, headers: Record<string, string> = {}, body?: Buffer, key: string | null = server.key): Promise<Response> {
  return fetch(url.startsWith('http') ? url : `${server.url}${url}`, {
    method,
    headers: { 'tus-resumable': '1.0.0', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    ...(body ? { body: new Uint8Array(body) } : {}),
  });
}

async function create(size: number, metadata: Record<string, string>, key: string | null = server.key): Promise<Response> {
  const meta = Object.entries(metadata).map(([k, v]) => `${k} ${b64(v)}`).join(',');
  return tus('POST', '/v1/uploads', { 'upload-length': String(size), ...(meta ? { 'upload-metadata': meta } : {}), 'content-length': '0' }, undefined, key);
}

const patch = (url: string, offset: number, bytes: Buffer, key: string | null = server.key) =>
  tus('PATCH', url, { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, bytes, key);

describe('tus 1.0 at /v1/uploads', () => {
  it('resumes from the server\'s offset, and the finishing PATCH answers like POST /apps/upload', async () => {
    const apk = tinyApk({ packageName: 'com.acme.resume', versionName: '2.1', versionCode: 21, label: 'Resume' });
    const created = await create(apk.length, { filename: 'Resume.apk', notes: 'Resumed **fine**' });
    assert.equal(created.status, 201, await created.text());
    const location = new URL(created.headers.get('location')!, server.url).href;
    assert.match(location, /\/v1\/uploads\/acc_[^/]+$/);
    assert.ok(created.headers.get('upload-expires'), 'expiration extension: Upload-Expires');
    const half = apk.length >> 1;
    const first = await patch(location, 0, apk.subarray(0, half));
    assert.equal(first.status, 204);
    assert.equal(first.headers.get('upload-offset'), String(half));
    const head = await tus('HEAD', location);
    assert.equal(head.headers.get('upload-offset'), String(half));
    assert.equal(head.headers.get('upload-length'), String(apk.length));
    assert.equal((await patch(location, 0, apk)).status, 409, 'a PATCH at the wrong offset is refused');
    const last = await patch(location, half, apk.subarray(half));
    assert.equal(last.status, 200);
    const body = await last.json();
    const multipart = (await api.upload('Resume.apk', apk)).body;
    assert.deepEqual(Object.keys(body.data).sort(), Object.keys(multipart.data).sort(), 'the same fields as the multipart answer');
    for (const field of ['file_name', 'size', 'sha256', 'platform', 'app_id', 'bundle_id', 'name', 'version', 'build']) assert.deepEqual(body.data[field], multipart.data[field], field);
    assert.equal(body.code, 200);
    assert.equal(body.data.notes, 'Resumed **fine**');
    const task = await api.post('/v1/tasks/create', { file_key: body.data.file_key, cert_type: 'enterprise' });
    assert.notEqual(task.body.error, 'file_key_not_found', 'the file_key works for tasks/create');
    assert.equal((await tus('HEAD', location)).status, 404, 'the tus copy is gone once received');
    const dir = path.join(server.dataDir, 'uploads-resumable');
    assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], []);
  });

  it('answers a request without Tus-Resumable: 1.0.0 with 412 tus_version_unsupported and the version it speaks', async () => {
    for (const [method, url] of [['POST', '/v1/uploads'], ['HEAD', '/v1/uploads/acc_x.y'], ['PATCH', '/v1/uploads/acc_x.y'], ['DELETE', '/v1/uploads/acc_x.y']] as const) {
      const response = await fetch(`${server.url}${url}`, { method, headers: { authorization: `Bearer ${server.key}`, 'upload-length': '10' } });
      assert.equal(response.status, 412, `${method} ${url}`);
      assert.equal(response.headers.get('tus-version'), '1.0.0');
      if (method !== 'HEAD') assert.equal(((await response.json()) as { error: string }).error, 'tus_version_unsupported');
    }
  });

  it('refuses an Upload-Length over 2 GiB at creation with 413 file_too_large', async () => {
    const response = await create(2 * 1024 ** 3 + 1, { filename: 'huge.ipa' });
    assert.equal(response.status, 413);
    const body = await response.json();
    assert.equal(body.error, 'file_too_large');
  });

  it('refuses other file types and a missing filename', async () => {
    const zip = await create(10, { filename: 'app.zip' });
    assert.equal(zip.status, 415);
    assert.equal((await zip.json()).error, 'unsupported_file_type');
    const none = await create(10, {});
    assert.equal(none.status, 400);
    assert.equal((await none.json()).error, 'invalid_request');
  });

  it('answers a finished non-package with 422 invalid_package, as the multipart route does', async () => {
    const junk = Buffer.from('not a zip at all');
    const location = (await create(junk.length, { filename: 'junk.apk' })).headers.get('location')!;
    const response = await patch(location, 0, junk);
    assert.equal(response.status, 422);
    assert.equal((await response.json()).error, 'invalid_package');
  });

  it('keeps uploads to their account (404 for another) and needs a key', async () => {
    const location = (await create(100, { filename: 'mine.apk' })).headers.get('location')!;
    assert.equal((await tus('HEAD', location, {}, undefined, otherKey)).status, 404);
    assert.equal((await patch(location, 0, Buffer.alloc(10), otherKey)).status, 404);
    assert.equal((await tus('DELETE', location, {}, undefined, otherKey)).status, 404);
    assert.equal((await tus('HEAD', location, {}, undefined, null)).status, 401);
    assert.equal((await create(100, { filename: 'x.apk' }, null)).status, 401);
    assert.equal((await tus('HEAD', location)).status, 200, 'still there for its owner');
  });

  it('terminates an upload with DELETE', async () => {
    const location = (await create(100, { filename: 'gone.apk' })).headers.get('location')!;
    await patch(location, 0, Buffer.alloc(40));
    assert.equal((await tus('DELETE', location)).status, 204);
    assert.equal((await tus('HEAD', location)).status, 404);
  });

  it('removes an abandoned upload once it expired', async () => {
    const created = await create(1000, { filename: 'abandoned.apk' });
    const expires = Date.parse(created.headers.get('upload-expires') ?? '');
    assert.ok(expires > Date.now() && expires < Date.now() + 8000, `Upload-Expires ${created.headers.get('upload-expires')}`);
    const location = created.headers.get('location')!;
    await patch(location, 0, Buffer.alloc(300));
    const id = location.split('/').pop()!;
    const dir = path.join(server.dataDir, 'uploads-resumable');
    assert.ok(readdirSync(dir).some((name) => name.startsWith(id)), 'held while fresh');
    const deadline = Date.now() + 20_000;
    while (readdirSync(dir).some((name) => name.startsWith(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith(id)), [], 'its data and metadata are gone');
    const head = await tus('HEAD', location);
    assert.ok(head.status === 404 || head.status === 410, `HEAD after expiry: ${head.status}`);
  });
});
