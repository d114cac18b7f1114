// Account webhooks: /v1/webhooks CRUD, signed deliveries retried like task callbacks and listed,
// and every event type sent once per change of state: certificate health (driven by a real
// openssl OCSP responder and by dates), task outcomes, a filled download quota, and developer
// account health.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyWebhookSignature } from '../../src/services/webhooks.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk, tinyIpa } from '../support/app-packages.ts';
import { startOcspResponder, type TestOcspResponder } from '../support/ocsp-responder.ts';
import { issueTestIdentity, testPki, type TestIdentity } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { id: string; event: string; created_at: string; data: any };
}

const day = 86400_000;
let server: TestServer;
let api: Api;
let responder: TestOcspResponder;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
let failuresLeft = 0;
const listed: Array<{ identity: TestIdentity; revokedAt?: Date }> = [];
let labels = 0;

before(async () => {
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        response.writeHead(503).end('busy');
        return;
      }
      received.push({ headers: request.headers, body, json: JSON.parse(body) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
  responder = await startOcspResponder();
  server = await startTestServer({ name: 'account-webhooks', env: { SIGNET_OUTBOUND_ALLOW: '127.0.0.1' }, overrides: { signers: [slowCopySigner('android', 50)] } });
  api = new Api(server.url, server.key);
});
after(async () => {
  await responder?.close();
  await server?.close();
  receiver?.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const about = (event: string, subject: string) => received.filter((r) => r.json.event === event && (r.json.data?.certificate?.id ?? r.json.data?.id ?? r.json.data?.distribution_id ?? r.json.data?.task_id) === subject);

function issue(validForMs = 400 * day): TestIdentity {
  labels += 1;
  return issueTestIdentity(`hook${labels}`, { issuer: testPki().intermediate, commonName: `iPhone Distribution: Hook ${labels}`, notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + validForMs), ocspUrl: responder.url });
}

async function uploadIos(identity: TestIdentity): Promise<any> {
  const pki = testPki();
  const response = await api.form('/v1/certificates', {
    kind: 'ios_enterprise',
    password: 'pw',
    file: { name: `${identity.label}.p12`, data: pki.p12(identity, { password: 'pw', includeChain: true }) },
    profile: { name: 'p.mobileprovision', data: pki.mobileprovision({ bundleId: '*', certificate: identity.certificate }) },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data;
}

async function accountId(): Promise<string> {
  return (await server.service.db.repos.accounts.findByName('default'))!.id;
}

async function checkAllTwice(): Promise<void> {
  await server.service.lifecycle!.checkAll();
  await server.service.lifecycle!.checkAll();
}

describe('/v1/webhooks', () => {
  let hookId: string;

  it('creates (every event by default), lists, gets, updates and deletes webhooks', async () => {
    const created = await api.post('/v1/webhooks', { url: receiverUrl, description: 'ops' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    hookId = created.body.data.id;
    assert.match(hookId, /^whk_/);
    assert.equal(created.body.data.enabled, true);
    assert.deepEqual(created.body.data.events, ['certificate.expiring', 'certificate.expired', 'certificate.revoked', 'developer_account.unhealthy', 'task.succeeded', 'task.failed', 'distribution.quota_reached']);
    assert.deepEqual((await api.get('/v1/webhooks')).body.data.items.map((w: { id: string }) => w.id), [hookId]);
    assert.deepEqual((await api.get(`/v1/webhooks/${hookId}`)).body.data, created.body.data);

    const other = (await api.post('/v1/webhooks', { url: `${receiverUrl}?other`, events: ['task.failed'] })).body.data;
    const disabled = await api.request('PATCH', `/v1/webhooks/${other.id}`, { json: { enabled: false, events: ['task.failed', 'task.succeeded'] } });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.data.enabled, false);
    assert.deepEqual(disabled.body.data.events, ['task.failed', 'task.succeeded']);
    assert.equal((await api.request('DELETE', `/v1/webhooks/${other.id}`)).status, 200);
    const gone = await api.get(`/v1/webhooks/${other.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error, 'webhook_not_found');
  });

  it('refuses unknown events and destinations the outbound policy refuses', async () => {
    const badEvent = await api.post('/v1/webhooks', { url: receiverUrl, events: ['task.exploded'] });
    assert.equal(badEvent.status, 400);
    assert.equal(badEvent.body.error, 'invalid_request');
    const privateUrl = await api.post('/v1/webhooks', { url: 'http://10.0.0.7/hook' });
    assert.equal(privateUrl.status, 400);
    assert.match(privateUrl.body.message, /private address/);
  });

  it('sends task.succeeded once, signed with the account secret, retried after a failed attempt and listed', async () => {
    const pki = testPki();
    await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
    failuresLeft = 1;
    const fileKey = (await api.upload('w.apk', tinyApk())).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
    const delivery = await until('task.succeeded', () => about('task.succeeded', taskId)[0]);
    assert.equal(delivery.json.data.status, 'succeeded');
    assert.match(delivery.json.id, /^evt_/);
    const secret = (await api.get('/v1/webhooks/secret')).body.data.secret;
    assert.ok(verifyWebhookSignature(secret, String(delivery.headers['signet-signature']), delivery.body));
    assert.equal(delivery.headers['signet-event'], 'task.succeeded');
    const attempts = (await api.get(`/v1/webhooks/${hookId}/deliveries`)).body.data.items.filter((d: { event_id: string }) => d.event_id === delivery.json.id);
    assert.deepEqual(attempts.map((d: { attempt: number; outcome: string }) => [d.attempt, d.outcome]).sort(), [[1, 'failed'], [2, 'delivered']]);
    await sleep(500);
    assert.equal(about('task.succeeded', taskId).length, 1);

    // distribution.quota_reached: the download that fills the quota announces it, once.
    const distribution = (await api.get(`/v1/tasks/${taskId}/distribution`)).body.data;
    assert.equal((await api.request('PATCH', `/v1/distributions/${distribution.id}`, { json: { max_downloads: 1 } })).status, 200);
    assert.equal((await fetch(distribution.download_url)).status, 200);
    assert.equal((await fetch(distribution.download_url)).status, 410);
    const quota = await until('distribution.quota_reached', () => about('distribution.quota_reached', distribution.id)[0]);
    assert.deepEqual([quota.json.data.downloads, quota.json.data.max_downloads], [1, 1]);
    await sleep(300);
    assert.equal(about('distribution.quota_reached', distribution.id).length, 1);
  });

  it('sends task.failed once', async () => {
    const pki = testPki();
    await api.form('/v1/certificates', {
      kind: 'ios_enterprise',
      password: 'pw',
      file: { name: 'dist.p12', data: pki.p12(pki.leaf, { password: 'pw' }) },
      profile: { name: 'p.mobileprovision', data: pki.mobileprovision({ bundleId: '*' }) },
    });
    const fileKey = (await api.upload('x.ipa', tinyIpa())).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
    const delivery = await until('task.failed', () => about('task.failed', taskId)[0]);
    assert.equal(delivery.json.data.error.code, 'signer_unavailable');
    await sleep(300);
    assert.equal(about('task.failed', taskId).length, 1);
  });

  it('sends certificate.expiring, certificate.revoked and certificate.expired once per change', async () => {
    const soon = issue(10 * day);
    const good = issue();
    const brief = issue(2500);
    listed.push({ identity: soon }, { identity: good }, { identity: brief });
    await responder.setIndex(listed);
    const soonCert = await uploadIos(soon);
    const goodCert = await uploadIos(good);
    const briefCert = await uploadIos(brief);

    await until('certificate.expiring', () => about('certificate.expiring', soonCert.id)[0]);
    await checkAllTwice();
    await sleep(300);
    assert.equal(about('certificate.expiring', soonCert.id).length, 1, 'expiring is announced once');
    assert.equal(about('certificate.expiring', goodCert.id).length, 0);

    listed.find((e) => e.identity === good)!.revokedAt = new Date(Date.now() - 60_000);
    await responder.setIndex(listed);
    const row = (await server.service.db.repos.certificates.find(await accountId(), goodCert.id))!;
    await server.service.lifecycle!.checkCertificate(row, { force: true });
    await server.service.lifecycle!.checkCertificate(row, { force: true });
    const revoked = await until('certificate.revoked', () => about('certificate.revoked', goodCert.id)[0]);
    assert.equal(revoked.json.data.health.state, 'revoked');
    assert.equal(revoked.json.data.previous_state, 'ok');

    await until('brief expiring', () => about('certificate.expiring', briefCert.id)[0]);
    await sleep(2600);
    await checkAllTwice();
    const expired = await until('certificate.expired', () => about('certificate.expired', briefCert.id)[0]);
    assert.equal(expired.json.data.previous_state, 'expiring');
    await sleep(300);
    assert.equal(about('certificate.revoked', goodCert.id).length, 1, 'revoked is announced once');
    assert.equal(about('certificate.expired', briefCert.id).length, 1, 'expired is announced once');
  });

  it('lists recent events; alerts leave successes out; a disabled webhook receives nothing', async () => {
    const events = (await api.get('/v1/events')).body.data.items as Array<{ type: string }>;
    assert.ok(events.some((e) => e.type === 'task.succeeded'));
    const alerts = (await api.get('/v1/events?alerts=true')).body.data.items as Array<{ type: string }>;
    assert.ok(alerts.length > 0 && alerts.every((e) => e.type !== 'task.succeeded'));
    assert.ok(alerts.some((e) => e.type === 'certificate.revoked'));

    await api.request('PATCH', `/v1/webhooks/${hookId}`, { json: { enabled: false } });
    const before = received.length;
    const fileKey = (await api.upload('w2.apk', tinyApk())).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
    await until('the task to end', async () => ((await api.get(`/v1/tasks/${taskId}`)).body.data.status === 'succeeded' ? true : undefined));
    await until('the event to be recorded', async () => ((await api.get('/v1/events?type=task.succeeded')).body.data.items.some((e: { subject_id: string }) => e.subject_id === taskId) ? true : undefined));
    await sleep(500);
    assert.equal(received.length, before);
  });
});
