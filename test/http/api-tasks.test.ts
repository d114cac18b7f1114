// Tasks and certificates over a real listening server: creation rules, idempotency, the task
// lifecycle through a (test-only) signer, artifacts with Range, cancel, listing, apps, expiry.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { UploadService } from '../../src/services/uploads.ts';
import { addEnterpriseIosCertificate, Api } from '../support/api-client.ts';
import { tinyApk, tinyIpa } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { failingSigner, slowCopySigner, writingSigner } from '../support/slow-signer.ts';
import { tempFiles } from '../support/temp-files.ts';
import { generatedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';

let server: TestServer;
let api: Api;
let certificateId: string;

before(async () => {
  server = await startTestServer({ name: 'tasks', overrides: { signers: [slowCopySigner('android', 300)] } });
  api = new Api(server.url, server.key);
});
after(() => server.close());

function assertError(response: { status: number; body: any }, status: number, code: string): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.code, status);
  assert.equal(response.body.error, code, response.body.message);
}

async function uploadApk(name = 'app.apk', bytes = tinyApk()): Promise<string> {
  const response = await api.upload(name, bytes);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data.file_key;
}

async function waitFor(taskId: string, statuses: string[], client = api): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await client.get(`/v1/tasks/${taskId}`);
    assert.equal(response.status, 200);
    if (statuses.includes(response.body.data.status)) return response.body.data;
    if (Date.now() > deadline) assert.fail(`task ${taskId} stuck in ${response.body.data.status}`);
    await sleep(100);
  }
}

describe('certificates', () => {
  const pki = testPki();
  const p12 = () => pki.p12(pki.androidRsa, { password: 'secret', alias: 'upload' });

  it('refuses a wrong password with 422 certificate_password_incorrect', async () => {
    const response = await api.form('/v1/certificates', { kind: 'android', password: 'wrong', file: { name: 'upload.p12', data: p12() } });
    assertError(response, 422, 'certificate_password_incorrect');
  });

  it('validates kind and file', async () => {
    assertError(await api.form('/v1/certificates', { password: 'secret', file: { name: 'upload.p12', data: p12() } }), 400, 'invalid_request');
    assertError(await api.form('/v1/certificates', { kind: 'android', password: 'secret' }), 400, 'invalid_request');
    assertError(await api.form('/v1/certificates', { kind: 'ios_enterprise', password: 'secret', file: { name: 'a.p12', data: p12() } }), 400, 'invalid_request');
  });

  it('stores an Android keystore and lists its metadata, never its secrets', async () => {
    const response = await api.form('/v1/certificates', { kind: 'android', password: 'secret', name: 'release', file: { name: 'upload.p12', data: p12() } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const cert = response.body.data;
    certificateId = cert.id;
    assert.match(cert.id, /^crt_/);
    assert.equal(cert.kind, 'android');
    assert.equal(cert.fingerprint, createHash('sha256').update(pki.androidRsa.certificate).digest('hex'));
    assert.ok(cert.subject.length > 0);
    assert.ok(Date.parse(cert.not_after) > Date.now());
    assert.equal(cert.profile, null);
    const list = await api.get('/v1/certificates');
    assert.deepEqual(list.body.data.items.map((c: any) => c.id), [cert.id]);
    assert.deepEqual((await api.get(`/v1/certificates/${cert.id}`)).body.data, cert);
    assert.doesNotMatch(JSON.stringify(list.body), /secret/);
    const row = await server.service.db.kysely.selectFrom('certificates').selectAll().where('id', '=', cert.id).executeTakeFirstOrThrow();
    assert.doesNotMatch(row.password_sealed ?? '', /secret/);
    assert.ok(!Buffer.from(row.material_sealed, 'base64').includes(p12().subarray(0, 64)));
  });

  it('refuses a profile that does not name the certificate with 422 profile_certificate_mismatch', async () => {
    const response = await api.form('/v1/certificates', {
      kind: 'ios_enterprise',
      password: 'pw',
      file: { name: 'dist.p12', data: pki.p12(pki.leaf, { password: 'pw' }) },
      profile: { name: 'other.mobileprovision', data: pki.mobileprovision({ bundleId: '*', certificate: pki.ecLeaf.certificate }) },
    });
    assertError(response, 422, 'profile_certificate_mismatch');
  });

  it('answers 404 certificate_not_found for unknown ids', async () => {
    assertError(await api.get('/v1/certificates/crt_unknown'), 404, 'certificate_not_found');
    assertError(await api.request('DELETE', '/v1/certificates/crt_unknown'), 404, 'certificate_not_found');
  });
});

describe('task creation', () => {
  it('requires file_key and cert_type, naming the missing field', async () => {
    const noKey = await api.post('/v1/tasks/create', { cert_type: 'enterprise' });
    assertError(noKey, 400, 'invalid_request');
    assert.match(noKey.body.message, /file_key/);
    const noType = await api.post('/v1/tasks/create', { file_key: 'tmp_x' });
    assertError(noType, 400, 'invalid_request');
    assert.match(noType.body.message, /cert_type/);
    assertError(await api.post('/v1/tasks/create', { file_key: 'tmp_x', cert_type: 'gold' }), 400, 'invalid_request');
    assertError(await api.request('POST', '/v1/tasks/create', { body: '{not json', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
    assertError(await api.request('POST', '/v1/tasks/create', { body: 'file_key=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  });

  it('answers 404 file_key_not_found, 422 cert_type_unsupported and 422 certificate_required', async () => {
    assertError(await api.post('/v1/tasks/create', { file_key: 'tmp_doesnotexistdoesnotexist00', cert_type: 'enterprise' }), 404, 'file_key_not_found');
    const apk = await uploadApk();
    assertError(await api.post('/v1/tasks/create', { file_key: apk, cert_type: 'super' }), 422, 'cert_type_unsupported');
    const ipa = (await api.upload('x.ipa', tinyIpa())).body.data.file_key;
    assertError(await api.post('/v1/tasks/create', { file_key: ipa, cert_type: 'enterprise' }), 422, 'certificate_required');
    assertError(await api.post('/v1/tasks/create', { file_key: ipa, cert_type: 'enterprise', certificate_id: certificateId }), 422, 'certificate_required');
    assertError(await api.post('/v1/tasks/create', { file_key: apk, cert_type: 'enterprise', certificate_id: 'crt_nope' }), 404, 'certificate_not_found');
  });

  it('answers 410 file_key_expired once the upload expired, and the sweeper deletes it', async () => {
    const fileKey = await uploadApk();
    await server.service.db.kysely.updateTable('uploads').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', fileKey).execute();
    assertError(await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' }), 410, 'file_key_expired');
    const row = await server.service.db.kysely.selectFrom('uploads').selectAll().where('id', '=', fileKey).executeTakeFirstOrThrow();
    const sweeper = new UploadService({ db: server.service.db, blobs: server.service.blobs, inspect: async () => assert.fail(), maxUploadBytes: 1, fileKeyTtlSeconds: 60 });
    assert.ok((await sweeper.sweepExpired()) >= 1);
    assert.equal(await server.service.blobs.exists(row.blob_key), false);
    assertError(await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' }), 404, 'file_key_not_found');
  });

  it('accepts a JSON body sent without a content type', async () => {
    const fileKey = await uploadApk();
    // A byte body: fetch then sends no Content-Type at all.
    const response = await api.request('POST', '/v1/tasks/create', { body: new TextEncoder().encode(JSON.stringify({ file_key: fileKey, cert_type: 'enterprise' })) });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.match(response.body.data.task_id, /^tsk_/);
    assert.equal(response.body.data.status, 'pending');
  });

  it('returns the same task for a repeated Idempotency-Key and 409 for another body', async () => {
    const fileKey = await uploadApk();
    const body = { file_key: fileKey, cert_type: 'enterprise' };
    const first = await api.post('/v1/tasks/create', body, { 'idempotency-key': 'build-77' });
    const again = await api.post('/v1/tasks/create', { cert_type: 'enterprise', file_key: fileKey }, { 'idempotency-key': 'build-77' });
    assert.equal(first.status, 200);
    assert.equal(again.body.data.task_id, first.body.data.task_id);
    const other = await api.post('/v1/tasks/create', { ...body, callback_url: 'http://127.0.0.1:9/hook' }, { 'idempotency-key': 'build-77' });
    assertError(other, 409, 'idempotency_conflict');
    const parallel = await Promise.all(Array.from({ length: 5 }, () => api.post('/v1/tasks/create', body, { 'idempotency-key': 'build-78' })));
    assert.equal(new Set(parallel.map((r) => r.body.data.task_id)).size, 1);
  });

  it('answers a retried pipeline step (the same file uploaded again, the same key) with its first task', async () => {
    const apk = tinyApk({ packageName: 'com.retried.step' });
    const first = await api.post('/v1/tasks/create', { file_key: await uploadApk('r.apk', apk), cert_type: 'enterprise' }, { 'idempotency-key': 'build-79' });
    const secondKey = await uploadApk('r.apk', apk);
    const again = await api.post('/v1/tasks/create', { file_key: secondKey, cert_type: 'enterprise' }, { 'idempotency-key': 'build-79' });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.data.task_id, first.body.data.task_id);
    const otherFile = await uploadApk('r.apk', tinyApk({ packageName: 'com.retried.other' }));
    assertError(await api.post('/v1/tasks/create', { file_key: otherFile, cert_type: 'enterprise' }, { 'idempotency-key': 'build-79' }), 409, 'idempotency_conflict');
  });
});

describe('task lifecycle', () => {
  it('signs, reports the artifact and serves it with Range support', async () => {
    const apk = tinyApk({ packageName: 'com.life.cycle' });
    const fileKey = await uploadApk('life.apk', apk);
    const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' });
    const taskId = created.body.data.task_id;
    const task = await waitFor(taskId, ['succeeded', 'failed']);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    assert.equal(task.attempts, 1);
    assert.equal(task.error, null);
    assert.equal(task.certificate_id, certificateId);
    assert.ok(task.started_at && task.finished_at);
    assert.equal(task.artifact.size, apk.length);
    assert.equal(task.artifact.sha256, createHash('sha256').update(apk).digest('hex'));
    assert.equal(task.artifact.download_url, `${server.url.replace('127.0.0.1', 'localhost')}/v1/tasks/${taskId}/artifact`);

    const whole = await fetch(`${server.url}/v1/tasks/${taskId}/artifact`, { headers: { authorization: `Bearer ${server.key}` } });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.match(whole.headers.get('content-disposition') ?? '', /life-signed\.apk/);
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), apk);
    const part = await fetch(`${server.url}/v1/tasks/${taskId}/artifact`, { headers: { authorization: `Bearer ${server.key}`, range: 'bytes=10-19' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-19/${apk.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), apk.subarray(10, 20));
    const suffix = await fetch(`${server.url}/v1/tasks/${taskId}/artifact`, { headers: { authorization: `Bearer ${server.key}`, range: 'bytes=-5' } });
    assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), apk.subarray(apk.length - 5));
    const beyond = await api.get(`/v1/tasks/${taskId}/artifact`, { range: `bytes=${apk.length}-` });
    assertError(beyond, 416, 'range_not_satisfiable');
    assert.equal(beyond.headers.get('content-range'), `bytes */${apk.length}`);
    assertError(await api.post(`/v1/tasks/${taskId}/cancel`), 409, 'task_not_cancelable');
  });

  it('cancels a task, pending or running; its artifact is never ready and its files are gone', async () => {
    // A signer that writes half an output and a scratch file, then would take a minute: both
    // cancels certainly land before it finishes, and the running one leaves files to clean.
    const slow = await startTestServer({ name: 'cancel', env: { SIGNET_WORKER_CONCURRENCY: '1' }, overrides: { signers: [writingSigner('android', 60_000)] } });
    try {
      const client = new Api(slow.url, slow.key);
      const pki = testPki();
      await client.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
      const create = async () => (await client.post('/v1/tasks/create', { file_key: (await client.upload('c.apk', tinyApk())).body.data.file_key, cert_type: 'enterprise' })).body.data.task_id;
      const running = await create();
      await waitFor(running, ['processing'], client);
      // Cancel once the signer has written its files (so there is something to clean up).
      for (let i = 0; !tempFiles(slow.dataDir).some((file) => file.path.endsWith('.scratch')); i += 1) {
        if (i > 1200) assert.fail('the signer never wrote its scratch file');
        await sleep(50);
      }
      const canceled = await client.post(`/v1/tasks/${running}/cancel`);
      assert.equal(canceled.status, 200);
      assert.equal(canceled.body.data.status, 'canceled');
      assert.equal((await client.post(`/v1/tasks/${running}/cancel`)).body.data.status, 'canceled', 'canceling twice is a no-op');
      const pending = await create();
      assert.equal((await client.post(`/v1/tasks/${pending}/cancel`)).body.data.status, 'canceled');
      // The positive event: the queue is done with both jobs (the running one aborted, the pending
      // one ran and found its task canceled). Only then is "still canceled" a verdict.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const jobs = await slow.service.db.kysely.selectFrom('jobs').select('payload_json').where('kind', '=', 'sign_task').execute();
        if (!jobs.some((job) => job.payload_json.includes(running) || job.payload_json.includes(pending))) break;
        if (Date.now() > deadline) assert.fail(`sign_task jobs still queued or running: ${JSON.stringify(jobs)}`);
        await sleep(50);
      }
      const left = tempFiles(slow.dataDir).filter((file) => !file.path.endsWith('owner.json'));
      assert.deepEqual(left, [], 'the canceled run\'s partial output and scratch files are removed');
      for (const taskId of [running, pending]) {
        const task = await waitFor(taskId, ['canceled', 'succeeded', 'failed'], client);
        assert.equal(task.status, 'canceled');
        assert.equal(task.artifact, null);
        assertError(await client.get(`/v1/tasks/${taskId}/artifact`), 409, 'artifact_not_ready');
      }
    } finally {
      await slow.close();
    }
  });

  it('cancels a running iOS task on the real signer: its thread stops and nothing is left in tmp', needsToolchain(), async () => {
    // The production signers on the SignerPool's threads; a large incompressible resource keeps
    // the re-sign running long enough for the cancel to land while the partial output is open.
    const pki = testPki();
    const real = await startTestServer({ name: 'cancel-ios', env: { SIGNET_WORKER_CONCURRENCY: '1', SIGNET_APPLE_CA_DIR: pki.caDir } });
    try {
      const client = new Api(real.url, real.key);
      const cert = await addEnterpriseIosCertificate(client, pki);
      const upload = await client.upload('big.ipa', generatedApp('cancel-ios', { fillerBytes: 96 * 1024 * 1024 }).bytes);
      assert.equal(upload.status, 200, JSON.stringify(upload.body));
      const taskId = (await client.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise', certificate_id: cert.id })).body.data.task_id;
      // Cancel once the pipeline has opened its partial output (signing is under way on a thread).
      for (let i = 0; !tempFiles(real.dataDir).some((file) => file.path.endsWith('.partial')); i += 1) {
        const now = (await client.get(`/v1/tasks/${taskId}`)).body.data;
        assert.ok(now.status === 'pending' || now.status === 'processing', `the task ended before it could be canceled: ${JSON.stringify(now)}`);
        if (i > 6000) assert.fail('the signer never opened its partial output');
        await sleep(5);
      }
      const canceled = await client.post(`/v1/tasks/${taskId}/cancel`);
      assert.equal(canceled.status, 200, JSON.stringify(canceled.body));
      assert.equal(canceled.body.data.status, 'canceled');
      // The positive event: the queue is done with the job (the run aborted and cleaned up).
      const deadline = Date.now() + 60_000;
      for (;;) {
        const jobs = await real.service.db.kysely.selectFrom('jobs').select('payload_json').where('kind', '=', 'sign_task').execute();
        if (!jobs.some((job) => job.payload_json.includes(taskId))) break;
        if (Date.now() > deadline) assert.fail(`the sign_task job is still queued or running: ${JSON.stringify(jobs)}`);
        await sleep(50);
      }
      const left = tempFiles(real.dataDir).filter((file) => !file.path.endsWith('owner.json'));
      assert.deepEqual(left, [], 'the canceled run\'s partial output and work folder are removed');
      const task = (await client.get(`/v1/tasks/${taskId}`)).body.data;
      assert.equal(task.status, 'canceled');
      assert.equal(task.artifact, null);
      assert.deepEqual(await real.service.db.kysely.selectFrom('tasks').select('artifact_blob_key').where('id', '=', taskId).execute(), [{ artifact_blob_key: null }]);
    } finally {
      await real.close();
    }
  });

  it('fails a task whose platform has no signer with signer_unavailable', async () => {
    const pki = testPki();
    const cert = await addEnterpriseIosCertificate(api, pki);
    assert.equal(cert.kind, 'ios_enterprise');
    assert.equal(cert.team_id, pki.teamId);
    assert.equal(cert.profile.type, 'enterprise');
    assert.match(cert.profile.app_id, /\*$/);
    assert.ok(cert.profile.expires_at);
    const ipa = (await api.upload('x.ipa', tinyIpa())).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: ipa, cert_type: 'enterprise' })).body.data.task_id;
    const task = await waitFor(taskId, ['failed', 'succeeded']);
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'signer_unavailable');
  });

  it('lists tasks newest first with cursor pagination and a status filter', async () => {
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api.get(`/v1/tasks?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      assert.ok(page.body.data.items.length <= 2);
      all.push(...page.body.data.items.map((t: any) => t.task_id));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    assert.ok(all.length >= 4);
    assert.equal(new Set(all).size, all.length);
    const succeeded = await api.get('/v1/tasks?status=succeeded');
    assert.ok(succeeded.body.data.items.length >= 1);
    assert.ok(succeeded.body.data.items.every((t: any) => t.status === 'succeeded'));
    assert.deepEqual((await api.get('/v1/tasks?status=canceled')).body.data.items, []);
    assertError(await api.get('/v1/tasks?status=lost'), 400, 'invalid_request');
    assertError(await api.get('/v1/tasks?cursor=@@@'), 400, 'invalid_request');
    assertError(await api.get('/v1/tasks/tsk_unknown'), 404, 'task_not_found');
  });
});

describe('apps', () => {
  it('groups packages by platform and bundle id with uploads and tasks newest first', async () => {
    const first = await uploadApk('a1.apk', tinyApk({ packageName: 'com.group.me', versionName: '1.0' }));
    const second = await uploadApk('a2.apk', tinyApk({ packageName: 'com.group.me', versionName: '2.0' }));
    const taskId = (await api.post('/v1/tasks/create', { file_key: second, cert_type: 'enterprise' })).body.data.task_id;
    const apps = await api.get('/v1/apps');
    const app = apps.body.data.items.find((a: any) => a.bundle_id === 'com.group.me');
    assert.equal(app.platform, 'android');
    const detail = await api.get(`/v1/apps/${app.app_id}`);
    assert.deepEqual(detail.body.data.uploads.map((u: any) => u.file_key), [second, first]);
    assert.deepEqual(detail.body.data.tasks.map((t: any) => t.task_id), [taskId]);
    assertError(await api.get('/v1/apps/app_unknown'), 404, 'app_not_found');
    await waitFor(taskId, ['succeeded', 'failed']);
  });
});

describe('engine failures', () => {
  it('records the engine error code on the failed task', async () => {
    const failing = await startTestServer({ name: 'failing', overrides: { signers: [failingSigner('android')] } });
    try {
      const client = new Api(failing.url, failing.key);
      const pki = testPki();
      await client.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidEc, { password: 'pw' }) } });
      const fileKey = (await client.upload('f.apk', tinyApk())).body.data.file_key;
      const taskId = (await client.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
      const task = await waitFor(taskId, ['failed', 'succeeded'], client);
      assert.equal(task.status, 'failed');
      assert.deepEqual(task.error, { code: 'apk_invalid', message: 'test signer: refusing this package' });
      assert.equal(task.artifact, null);
    } finally {
      await failing.close();
    }
  });
});
