// End to end with the production wiring: `signet serve` (child process) signs an uploaded APK
// with the account's keystore on its worker-thread pool, and the artifact passes the external
// oracle `apksigner verify`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';

const apksigner = spawnSync('apksigner', ['--version'], { encoding: 'utf8' }).status === 0;
let server: ChildServer;
let dataDir: string;

before(async () => {
  dataDir = freshDataDir('android-e2e');
  server = await spawnServer({ dataDir, env: { SIGNET_LOG_LEVEL: 'warn' } });
});
after(() => server.stop());

it('signs an APK through the API and the artifact verifies with apksigner', { skip: apksigner ? false : 'apksigner is not installed' }, async () => {
  const api = new Api(server.url, server.key);
  const pki = testPki();
  const cert = await api.form('/v1/certificates', { kind: 'android', password: 'pw', alias: 'release', file: { name: 'release.p12', data: pki.p12(pki.androidRsa, { password: 'pw', alias: 'release' }) } });
  assert.equal(cert.status, 200, JSON.stringify(cert.body));
  const upload = await api.upload('demo.apk', tinyApk({ packageName: 'com.signet.e2e', versionName: '9.9', versionCode: 99 }));
  const taskId = (await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise' })).body.data.task_id;
  let task: any;
  for (let i = 0; i < 600; i += 1) {
    task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') break;
    await sleep(100);
  }
  assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
  assert.deepEqual(task.app, { bundle_id: 'com.signet.e2e', name: 'Signet Example', version: '9.9', build: '99' });
  assert.ok(task.verification.includes('v2'), JSON.stringify(task.verification));
  const download = await fetch(task.artifact.download_url.replace('localhost', '127.0.0.1'), { headers: { authorization: `Bearer ${server.key}` } });
  assert.equal(download.status, 200);
  const file = path.join(dataDir, 'signed.apk');
  writeFileSync(file, Buffer.from(await download.arrayBuffer()));
  const verify = spawnSync('apksigner', ['verify', '--verbose', file], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stdout + verify.stderr);
  assert.match(verify.stdout, /Verified using v2 scheme \(APK Signature Scheme v2\): true/);
});
