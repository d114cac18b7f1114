// The whole service path with the production signers: upload an .ipa, store an enterprise
// certificate (p12 + in-house profile), create an enterprise task, wait for it to succeed, and
// verify the downloaded artifact independently of the task's own verification. A profile that
// does not cover the app fails the task with its catalogue code.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { allProblems, verifyIpa } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { Api } from '../../../support/api-client.ts';
import { testOutputDir } from '../../../support/fixtures.ts';
import { generatedApp, pythonSealCheck, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';
import { startTestServer, type TestServer } from '../../../support/server.ts';

let server: TestServer;
let api: Api;
let app: GeneratedApp;

async function certificate(bundleId: string): Promise<string> {
  const pki = testPki();
  const response = await api.form('/v1/certificates', {
    kind: 'ios_enterprise',
    password: 'pw',
    file: { name: 'dist.p12', data: pki.p12(pki.leaf, { password: 'pw', includeChain: true }) },
    profile: { name: 'inhouse.mobileprovision', data: pki.mobileprovision({ bundleId }) },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data.id;
}

async function runTask(certificateId: string, ipa: Buffer = app.bytes): Promise<any> {
  const upload = await api.upload('app.ipa', ipa);
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  const created = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise', certificate_id: certificateId });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const task = (await api.get(`/v1/tasks/${created.body.data.task_id}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') return task;
    if (Date.now() > deadline) assert.fail(`task stuck in ${task.status}`);
    await sleep(200);
  }
}

describe('iOS enterprise task through the HTTP API', needsToolchain(), () => {
  before(async () => {
    app = generatedApp('api-app');
    server = await startTestServer({ name: 'ios-task' });
    api = new Api(server.url, server.key);
  });
  after(() => server?.close());

  it('upload → enterprise task → succeeded → the artifact verifies', async () => {
    const task = await runTask(await certificate('*'));
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    const download = await fetch(`${server.url}/v1/tasks/${task.task_id}/artifact`, { headers: { authorization: `Bearer ${server.key}` } });
    assert.equal(download.status, 200);
    const bytes = Buffer.from(await download.arrayBuffer());
    const report = await verifyIpa(new BufferSource(bytes));
    assert.deepEqual(allProblems(report), []);
    assert.equal(report.teamId, testPki().teamId);
    const file = path.join(testOutputDir('ios-app'), 'api-artifact.ipa');
    writeFileSync(file, bytes);
    assert.deepEqual(pythonSealCheck(file, 'api-artifact').problems, []);
  });

  it('fails the task with bundle_id_mismatch when the profile does not cover the app', async () => {
    const task = await runTask(await certificate('com.unrelated.app'));
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'bundle_id_mismatch', JSON.stringify(task.error));
    assert.match(task.error.message, /com\.signet\.generated/);
  });

  it('fails the task with ipa_invalid when a framework has lost its executable, naming the bundle and the file', async () => {
    const broken = generatedApp('api-no-kit-binary', { omit: ['Frameworks/Kit.framework/Kit'] });
    const task = await runTask(await certificate('*'), broken.bytes);
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'ipa_invalid', JSON.stringify(task.error));
    assert.match(task.error.message, /Payload\/Signet\.app\/Frameworks\/Kit\.framework\/Info\.plist names the executable "Kit": Payload\/Signet\.app\/Frameworks\/Kit\.framework\/Kit, which is not in the bundle/);
  });
});
