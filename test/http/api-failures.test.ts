// The failure paths of the catalogue that need a particular setup: a certificate in use, a
// signer that crashes (signing_failed at once) or fails for a machine reason (retried), a shutdown during an upload
// (service_unavailable), an unexpected bug (internal_error, no details leaked), and a webhook
// receiver that keeps failing (webhook_failed).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildHttpApp } from '../../src/http/app.ts';
import { SCOPES } from '../../src/services/scopes.ts';
import { ERROR_STATUS } from '../../src/http/error-status.ts';
import { ERROR_CATALOGUE } from '../../src/errors.ts';
import type { TaskService } from '../../src/services/tasks.ts';
import { OutboundAllowList } from '../../src/services/outbound.ts';
import { taskView } from '../../src/http/views.ts';
import { WebhookService } from '../../src/services/webhooks.ts';
import { Api, streamUpload } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer } from '../support/server.ts';
import { crashingSigner, flakySigner, slowCopySigner } from '../support/slow-signer.ts';

async function withCertificate(api: Api): Promise<string> {
  const pki = testPki();
  const response = await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data.id;
}

async function settle(api: Api, taskId: string): Promise<any> {
  for (let i = 0; i < 600; i += 1) {
    const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (['succeeded', 'failed', 'canceled'].includes(task.status)) return task;
    await sleep(100);
  }
  assert.fail(`task ${taskId} did not settle`);
}

it('maps every catalogue code to an HTTP status', () => {
  for (const code of Object.keys(ERROR_CATALOGUE)) {
    const status = ERROR_STATUS[code as keyof typeof ERROR_STATUS];
    assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code} → ${status}`);
  }
});

describe('with a slow signer', () => {
  it('refuses to delete a certificate a pending task uses with 409 certificate_in_use', async () => {
    const server = await startTestServer({ name: 'in-use', overrides: { signers: [slowCopySigner('android', 60_000)] } });
    try {
      const api = new Api(server.url, server.key);
      const certificateId = await withCertificate(api);
      const fileKey = (await api.upload('u.apk', tinyApk())).body.data.file_key;
      const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
      const refused = await api.request('DELETE', `/v1/certificates/${certificateId}`);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error, 'certificate_in_use');
      // Once the task has ended (here: canceled while the signer is still busy), the certificate can go.
      assert.equal((await api.post(`/v1/tasks/${taskId}/cancel`)).body.data.status, 'canceled');
      assert.equal((await settle(api, taskId)).status, 'canceled');
      const deleted = await api.request('DELETE', `/v1/certificates/${certificateId}`);
      assert.deepEqual(deleted.body, { code: 200, data: { id: certificateId, deleted: true } });
      assert.equal((await api.get(`/v1/certificates/${certificateId}`)).status, 404);
    } finally {
      await server.close();
    }
  });

  it('aborts an upload in flight at shutdown with 503 service_unavailable and keeps nothing of it', async () => {
    const server = await startTestServer({ name: 'shutdown', overrides: { signers: [] } });
    const trickle = new Readable({
      read() {
        setTimeout(() => this.push(Buffer.alloc(32 * 1024, 7)), 10);
      },
    });
    const upload = streamUpload(server.url, server.key, 'slow.apk', 512 * 1024 * 1024, trickle);
    await sleep(500);
    const closing = server.service.close();
    const response = await upload;
    await closing;
    trickle.destroy();
    assert.equal(response.status, 503);
    assert.equal(response.body.error, 'service_unavailable');
    await server.close();
  });
});

it('fails a task whose engine throws on the input with signing_failed on the first attempt', { timeout: 120_000 }, async () => {
  const server = await startTestServer({ name: 'crashing', overrides: { signers: [crashingSigner('android')] } });
  try {
    const api = new Api(server.url, server.key);
    await withCertificate(api);
    const fileKey = (await api.upload('c.apk', tinyApk())).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
    const task = await settle(api, taskId);
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'signing_failed');
    assert.doesNotMatch(task.error.message, /test signer/, 'internal error text is not shown to clients');
    assert.equal(task.attempts, 1, 'the same input would fail the same way: no retries');
  } finally {
    await server.close();
  }
});

it('retries a run that failed for a machine reason (ENOSPC), and succeeds', { timeout: 120_000 }, async () => {
  const server = await startTestServer({ name: 'flaky', overrides: { signers: [flakySigner('android', 1)] } });
  try {
    const api = new Api(server.url, server.key);
    await withCertificate(api);
    const fileKey = (await api.upload('f.apk', tinyApk())).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
    const task = await settle(api, taskId);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    assert.equal(task.attempts, 2);
  } finally {
    await server.close();
  }
});

it('answers an unexpected bug with 500 internal_error and a generic message', async () => {
  const failing = {
    list: async () => {
      throw new Error('database exploded: secret detail');
    },
  } as unknown as TaskService;
  const { app } = await buildHttpApp({
    authenticate: async () => ({ accountId: 'acc_test', keyId: 'key_test', scopes: new Set(SCOPES), user: null }),
    uploads: {} as never,
    tasks: failing,
    certificates: {} as never,
    apps: {} as never,
    distributions: {} as never,
    linkKey: Buffer.alloc(32),
    ready: async () => ({}),
    baseUrl: 'http://localhost',
    maxUploadBytes: 10,
    rateLimit: { perSecond: 100, burst: 100 },
    logger: false,
  });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const api = new Api(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, `sk_${'a'.repeat(43)}`);
    const response = await api.get('/v1/tasks');
    assert.deepEqual(response.body, { code: 500, error: 'internal_error', message: ERROR_CATALOGUE.internal_error });
  } finally {
    await app.close();
  }
});

it('reports a failed webhook delivery as webhook_failed and records the attempt', async () => {
  const receiver = http.createServer((_request, response) => response.writeHead(500).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const server = await startTestServer({ name: 'webhook-failed', env: { SIGNET_OUTBOUND_ALLOW: '127.0.0.1' }, overrides: { signers: [] } });
  try {
    const api = new Api(server.url, server.key);
    await withCertificate(api);
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const fileKey = (await api.upload('w.apk', tinyApk())).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', callback_url: url })).body.data.task_id;
    await settle(api, taskId);
    const webhooks = new WebhookService({ db: server.service.db, taskBody: (row, deliveries) => taskView(row, server.url, deliveries), outbound: { allow: new OutboundAllowList('127.0.0.1') } });
    const context = { jobId: 'job_test', kind: 'deliver_webhook' as const, attempt: 9, maxAttempts: 9, signal: new AbortController().signal };
    await assert.rejects(webhooks.deliver({ taskId, event: 'task.failed' }, context), (error: any) => error.code === 'webhook_failed');
    const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    const mine = task.webhook_deliveries.find((d: any) => d.attempt === 9);
    assert.deepEqual([mine.outcome, mine.status_code, mine.error], ['failed', 500, 'receiver answered HTTP 500']);
  } finally {
    await server.close();
    receiver.close();
  }
});
