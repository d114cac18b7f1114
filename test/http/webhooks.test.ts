// Webhooks: signed POSTs of task.succeeded / task.failed to callback_url, retried until the
// receiver answers 2xx, with every attempt visible on the task.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyWebhookSignature, webhookSignature } from '../../src/services/webhooks.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: TestServer;
let api: Api;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
let failuresLeft = 0;

before(async () => {
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        response.writeHead(503).end('busy');
      } else {
        response.writeHead(204).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  // The receiver is on this machine: loopback must be admitted explicitly (SSRF policy).
  server = await startTestServer({ name: 'webhooks', env: { SIGNET_OUTBOUND_ALLOW: '127.0.0.1' }, overrides: { signers: [slowCopySigner('android', 50)] } });
  api = new Api(server.url, server.key);
  const pki = testPki();
  await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
});
after(async () => {
  await server.close();
  receiver.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

it('signs the body with the account secret (t=…,v1=HMAC-SHA256 of "t.body")', () => {
  const header = webhookSignature('whsec_test', 1700000000, '{"a":1}');
  const mac = createHmac('sha256', 'whsec_test').update('1700000000.{"a":1}').digest('hex');
  assert.equal(header, `t=1700000000,v1=${mac}`);
  assert.ok(verifyWebhookSignature('whsec_test', header, '{"a":1}', 300, 1700000000_000));
  assert.equal(verifyWebhookSignature('whsec_test', header, '{"a":2}', 300, 1700000000_000), false);
  assert.equal(verifyWebhookSignature('whsec_other', header, '{"a":1}', 300, 1700000000_000), false);
  assert.equal(verifyWebhookSignature('whsec_test', header, '{"a":1}', 300, 1700001000_000), false, 'too old');
});

it('delivers task.succeeded, retrying after a failed attempt, and shows every attempt on the task', async () => {
  failuresLeft = 1;
  const fileKey = (await api.upload('w.apk', tinyApk())).body.data.file_key;
  const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', callback_url: receiverUrl, notes: 'Webhook notes' })).body.data.task_id;
  const task = await until('two delivery attempts', async () => {
    const t = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    return t.webhook_deliveries.length >= 2 ? t : undefined;
  });
  assert.equal(task.status, 'succeeded');
  assert.deepEqual(task.webhook_deliveries.map((d: any) => [d.event, d.attempt, d.outcome, d.status_code]), [
    ['task.succeeded', 1, 'failed', 503],
    ['task.succeeded', 2, 'delivered', 204],
  ]);
  const secret = await server.service.db.repos.accounts.webhookSecret((await server.service.db.repos.accounts.findByName('default'))!.id);
  const last = received.at(-1)!;
  assert.equal(last.headers['content-type'], 'application/json');
  assert.ok(verifyWebhookSignature(secret, String(last.headers['signet-signature']), last.body));
  const payload = JSON.parse(last.body);
  assert.equal(payload.event, 'task.succeeded');
  assert.equal(payload.data.task_id, taskId);
  assert.equal(payload.data.status, 'succeeded');
  assert.equal(payload.data.artifact.size, task.artifact.size);
  assert.equal(payload.data.notes, 'Webhook notes');
  // The distribution links, the same the task shows (and GET /distribution gives).
  const distribution = (await api.get(`/v1/tasks/${taskId}/distribution`)).body.data;
  assert.deepEqual(payload.data.links, task.links);
  assert.equal(payload.data.links.distribution_id, distribution.id);
  assert.equal(payload.data.links.install_url, distribution.url);
  assert.equal(payload.data.links.download_url, distribution.download_url);
  assert.equal(payload.data.links.app_url, distribution.app_url);
  assert.match(payload.data.links.app_url, /\/a\/[0-9A-Za-z]+$/);
  assert.equal(payload.data.links.itms_services_url, null, 'an APK has no itms-services link');
});
