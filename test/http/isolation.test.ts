// Tenant isolation: a key of account B sees nothing of account A (404 on every resource, never
// 403), and revoked keys get 401.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

let server: TestServer;
let a: Api;
let b: Api;
let keys: ApiKeyService;

before(async () => {
  server = await startTestServer({ name: 'isolation', overrides: { signers: [slowCopySigner('android', 50)] } });
  keys = new ApiKeyService(server.service.db.repos);
  a = new Api(server.url, server.key);
  b = new Api(server.url, (await keys.create('bravo')).key);
});
after(() => server.close());

it("answers 404 for every resource of another account", async () => {
  const pki = testPki();
  const cert = (await a.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } })).body.data;
  const upload = (await a.upload('a.apk', tinyApk({ packageName: 'com.alpha.only' }))).body.data;
  const taskId = (await a.post('/v1/tasks/create', { file_key: upload.file_key, cert_type: 'enterprise' })).body.data.task_id;
  for (let i = 0; i < 200 && (await a.get(`/v1/tasks/${taskId}`)).body.data.status !== 'succeeded'; i += 1) await sleep(100);

  const expect404 = async (response: Promise<{ status: number; body: any }>, code: string) => {
    const r = await response;
    assert.equal(r.status, 404, JSON.stringify(r.body));
    assert.equal(r.body.error, code);
  };
  await expect404(b.get(`/v1/tasks/${taskId}`), 'task_not_found');
  await expect404(b.post(`/v1/tasks/${taskId}/cancel`), 'task_not_found');
  await expect404(b.get(`/v1/tasks/${taskId}/artifact`), 'task_not_found');
  await expect404(b.get(`/v1/certificates/${cert.id}`), 'certificate_not_found');
  await expect404(b.request('DELETE', `/v1/certificates/${cert.id}`), 'certificate_not_found');
  await expect404(b.get(`/v1/apps/${upload.app_id}`), 'app_not_found');
  await expect404(b.post('/v1/tasks/create', { file_key: upload.file_key, cert_type: 'enterprise' }), 'file_key_not_found');
  await expect404(b.post('/v1/tasks/create', { file_key: upload.file_key, cert_type: 'enterprise', certificate_id: cert.id }), 'file_key_not_found');
  assert.deepEqual((await b.get('/v1/tasks')).body.data.items, []);
  assert.deepEqual((await b.get('/v1/apps')).body.data.items, []);
  assert.deepEqual((await b.get('/v1/certificates')).body.data.items, []);

  // B's own upload cannot use A's certificate either.
  const own = (await b.upload('b.apk', tinyApk())).body.data.file_key;
  await expect404(b.post('/v1/tasks/create', { file_key: own, cert_type: 'enterprise', certificate_id: cert.id }), 'certificate_not_found');
  // And A still sees everything.
  assert.equal((await a.get(`/v1/tasks/${taskId}/artifact`)).status, 200);
});

it('answers 401 once a key is revoked', async () => {
  const created = await keys.create('charlie', 'temporary');
  const c = new Api(server.url, created.key);
  assert.equal((await c.get('/v1/tasks')).status, 200);
  assert.equal(await keys.revoke(created.info.id), true);
  const after = await c.get('/v1/tasks');
  assert.equal(after.status, 401);
  assert.equal(after.body.error, 'unauthorized');
  assert.match(after.headers.get('www-authenticate') ?? '', /^Bearer/);
  assert.equal(await keys.revoke(created.info.id), false);
});
