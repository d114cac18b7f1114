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
import { apkManifest, tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';
import { buildZip } from '../support/zip-builder.ts';

const apksigner = spawnSync('apksigner', ['--version'], { encoding: 'utf8' }).status === 0;
let server: ChildServer;
let dataDir: string;

before(async () => {
  dataDir = freshDataDir('android-e2e');
  server = await spawnServer({ dataDir, env: { SIGNET_LOG_LEVEL: 'warn' } });
});
after(() => server.stop());

let certificateStored = false;

/** Uploads `apk`, signs it with the account's Android certificate and returns the finished task. */
async function signThroughApi(api: Api, name: string, apk: Buffer): Promise<any> {
  if (!certificateStored) {
    const pki = testPki();
    const cert = await api.form('/v1/certificates', { kind: 'android', password: 'pw', alias: 'release', file: { name: 'release.p12', data: pki.p12(pki.androidRsa, { password: 'pw', alias: 'release' }) } });
    assert.equal(cert.status, 200, JSON.stringify(cert.body));
    certificateStored = true;
  }
  const upload = await api.upload(name, apk);
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  const taskId = (await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise' })).body.data.task_id;
  let task: any;
  for (let i = 0; i < 600; i += 1) {
    task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') break;
    await sleep(100);
  }
  return task;
}

it('signs an APK through the API and the artifact verifies with apksigner', { skip: apksigner ? false : 'apksigner is not installed' }, async () => {
  const api = new Api(server.url, server.key);
  const task = await signThroughApi(api, 'demo.apk', tinyApk({ packageName: 'com.signet.e2e', versionName: '9.9', versionCode: 99 }));
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

it('signs an APK whose old signature files use an unsupported method or disagreeing headers (issue #17)', { skip: apksigner ? false : 'apksigner is not installed' }, async () => {
  const api = new Api(server.url, server.key);
  const apk = buildZip([
    { name: 'META-INF/CERT.RSA', data: 'old block', method: 21, rawData: Buffer.from('method 21 bytes') },
    { name: 'META-INF/CERT.SF', data: 'Signature-Version: 1.0\r\n\r\n', method: 8, localMethod: 0 },
    { name: 'AndroidManifest.xml', data: apkManifest({ packageName: 'com.signet.edge' }), method: 0 },
    { name: 'classes.dex', data: Buffer.from('dex\n035\0'), method: 8 },
  ]).bytes;
  const task = await signThroughApi(api, 'odd.apk', apk);
  assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
  const download = await fetch(task.artifact.download_url.replace('localhost', '127.0.0.1'), { headers: { authorization: `Bearer ${server.key}` } });
  const file = path.join(dataDir, 'odd-signed.apk');
  writeFileSync(file, Buffer.from(await download.arrayBuffer()));
  const verify = spawnSync('apksigner', ['verify', '--verbose', file], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stdout + verify.stderr);
  const listing = spawnSync('unzip', ['-Z1', file], { encoding: 'utf8' }).stdout.split('\n');
  assert.ok(!listing.includes('META-INF/CERT.RSA') && !listing.includes('META-INF/CERT.SF'), listing.join(', '));
});
