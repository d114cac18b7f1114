// Packages are read where they are stored: with the S3 store, upload inspection reads the object
// with range requests only (the end of the zip, its central directory, the entries it needs),
// never one GET of the whole object, and never a local copy. Signing tasks (the real engines on
// the worker's thread pool, Android and iOS) read their input the same way: range GETs, each
// smaller than the object, adding up to about the object once.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { addEnterpriseIosCertificate, Api, waitForTaskEnd } from '../support/api-client.ts';
import { streamedApk } from '../support/app-packages.ts';
import { countingS3Proxy, startS3rver, type S3Request, type TestS3 } from '../support/s3rver.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';
import { testPki } from '../support/pki.ts';
import { generatedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';
import { loadConfig } from '../../src/config.ts';
import { startWorkerService } from '../../src/main/service.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempFiles } from '../support/temp-files.ts';
import { buildZip } from '../support/zip-builder.ts';
import { text } from 'node:stream/consumers';
import { Readable } from 'node:stream';

let s3: TestS3;
let proxy: Awaited<ReturnType<typeof countingS3Proxy>>;
let server: TestServer;

before(async () => {
  s3 = await startS3rver();
  proxy = await countingS3Proxy(s3.endpoint);
  // The SDK reads credentials from the environment (the production default chain).
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
  server = await startTestServer({
    name: 's3-ranged',
    env: { SIGNET_STORAGE: 's3', SIGNET_S3_BUCKET: s3.bucket, SIGNET_S3_ENDPOINT: proxy.url, SIGNET_S3_FORCE_PATH_STYLE: 'true', SIGNET_WORKER_CONCURRENCY: '0' },
  });
});
after(async () => {
  await server?.close();
  await proxy?.close();
  await s3?.close();
});

/** The GETs of one object (the upload's blob) made while `fn` ran. */
async function getsDuring(fn: () => Promise<string>): Promise<{ fileKey: string; gets: S3Request[] }> {
  const from = proxy.requests.length;
  const fileKey = await fn();
  const gets = proxy.requests.slice(from).filter((r) => r.method === 'GET' && r.path.includes(`/uploads/${fileKey}`));
  return { fileKey, gets };
}

function assertRangedOnly(gets: readonly S3Request[], size: number): string {
  assert.ok(gets.length > 0, 'the package was read');
  for (const get of gets) assert.match(get.range ?? '', /^bytes=\d+-\d+$/, `a GET without a range: ${get.path}`);
  const bytes = gets.reduce((sum, get) => sum + get.bytes, 0);
  assert.ok(bytes < size / 4, `read ${bytes} of ${size} bytes`);
  return `${gets.length} range GETs, ${bytes} of ${size} bytes`;
}

/**
 * A signer reads every entry, so its bytes add up to about the object; what it must never do is
 * fetch it in one piece: every GET is a range smaller than the object, and the ranges add up to
 * at most the object plus read-ahead overshoot (each byte fetched about once).
 */
function assertNoWholeObject(gets: readonly S3Request[], size: number): string {
  for (const get of gets) {
    const range = /^bytes=(\d+)-(\d+)$/.exec(get.range ?? '');
    assert.ok(range, `a GET without a range: ${get.path}`);
    assert.ok(Number(range[2]) - Number(range[1]) + 1 < size, `a GET of ${get.range} covers the whole object (${size} bytes)`);
  }
  assert.ok(gets.length > 1, `the package was read in ranges (${gets.length} GETs)`);
  const bytes = gets.reduce((sum, get) => sum + get.bytes, 0);
  assert.ok(bytes <= size * 1.25, `read ${bytes} bytes of a ${size}-byte object`);
  return `${gets.length} range GETs, ${bytes} of ${size} bytes`;
}

it('inspects an uploaded APK on S3 with range GETs only', { timeout: 120_000 }, async (t) => {
  const api = new Api(server.url, server.key);
  const apk = streamedApk(24 * 1024 * 1024, { packageName: 'com.ranged.reads' });
  const chunks: Buffer[] = [];
  for await (const chunk of apk.stream()) chunks.push(chunk as Buffer);
  const { gets } = await getsDuring(async () => {
    const upload = await api.upload('big.apk', Buffer.concat(chunks));
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    assert.equal(upload.body.data.bundle_id, 'com.ranged.reads');
    return upload.body.data.file_key;
  });
  t.diagnostic(assertRangedOnly(gets, apk.size));
  assert.deepEqual(tempFiles(server.dataDir).filter((f) => !f.path.endsWith('owner.json')), [], 'no local copy');
});

it('inspects an uploaded IPA on S3 with range GETs only', { timeout: 120_000 }, async (t) => {
  const api = new Api(server.url, server.key);
  const plist = '<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.ranged.ipa</string><key>CFBundleExecutable</key><string>App</string><key>CFBundleShortVersionString</key><string>1.0</string><key>CFBundleVersion</key><string>7</string></dict></plist>';
  const filler = Buffer.alloc(16 * 1024 * 1024);
  for (let i = 0; i < filler.length; i += 1) filler[i] = (i * 131 + (i >>> 9)) & 0xff;
  const ipa = buildZip([
    { name: 'Payload/App.app/App', data: filler, method: 0 },
    { name: 'Payload/App.app/Info.plist', data: plist, method: 8 },
  ]).bytes;
  const { gets } = await getsDuring(async () => {
    const upload = await api.upload('big.ipa', ipa);
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    assert.equal(upload.body.data.bundle_id, 'com.ranged.ipa');
    return upload.body.data.file_key;
  });
  t.diagnostic(assertRangedOnly(gets, ipa.length));
});

it('publishes a signed APK on S3 reading its release facts with range GETs only', { timeout: 120_000 }, async (t) => {
  const api = new Api(server.url, server.key);
  const pki = testPki();
  assert.equal((await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } })).status, 200);
  const apk = streamedApk(12 * 1024 * 1024, { packageName: 'com.ranged.publish' });
  const chunks: Buffer[] = [];
  for await (const chunk of apk.stream()) chunks.push(chunk as Buffer);
  const fileKey = (await api.upload('pub.apk', Buffer.concat(chunks))).body.data.file_key;
  const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
  const from = proxy.requests.length;
  const config = loadConfig({ SIGNET_DATA_DIR: server.dataDir, SIGNET_LOG_LEVEL: 'silent', SIGNET_WORKER_CONCURRENCY: '1', SIGNET_STORAGE: 's3', SIGNET_S3_BUCKET: s3.bucket, SIGNET_S3_ENDPOINT: proxy.url, SIGNET_S3_FORCE_PATH_STYLE: 'true' });
  // The test signer copies its input, so the artifact is the 12 MiB package again.
  const worker = await startWorkerService(config, { signers: [slowCopySigner('android', 1)], queueTuning: { pollIntervalMs: 50 } });
  try {
    const task = await waitForTaskEnd(api, taskId, 30_000);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    // Published (right after the task succeeds): the install link exists once the release facts were read.
    for (let i = 0; ; i += 1) {
      const published = await server.service.db.kysely.selectFrom('distributions').select('task_id').where('task_id', '=', taskId).execute();
      if (published.length === 1) break;
      if (i > 400) assert.fail('the task was never published');
      await sleep(50);
    }
  } finally {
    await worker.close();
  }
  const artifactGets = proxy.requests.slice(from).filter((r) => r.method === 'GET' && r.path.includes(`/artifacts/${taskId}`));
  t.diagnostic(`release facts: ${assertRangedOnly(artifactGets, apk.size)}`);
  // The test signer reads its input through the DataSource the worker hands it: range GETs only.
  const inputGets = proxy.requests.slice(from).filter((r) => r.method === 'GET' && r.path.includes(`/uploads/${fileKey}`));
  t.diagnostic(`worker input: ${assertNoWholeObject(inputGets, apk.size)}`);
});

it('signs on the worker\'s thread pool (Android and iOS) reading each package with range GETs only', { ...needsToolchain(), timeout: 240_000 }, async (t) => {
  const api = new Api(server.url, server.key);
  const pki = testPki();
  const android = await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  assert.equal(android.status, 200, JSON.stringify(android.body));
  const ios = await addEnterpriseIosCertificate(api, pki);
  const apk = streamedApk(12 * 1024 * 1024, { packageName: 'com.ranged.sign' });
  const chunks: Buffer[] = [];
  for await (const chunk of apk.stream()) chunks.push(chunk as Buffer);
  const ipa = generatedApp('s3-ranged', { fillerBytes: 6 * 1024 * 1024 }).bytes;
  const packages = [
    { name: 'sign.apk', bytes: Buffer.concat(chunks), certificate: android.body.data.id as string },
    { name: 'sign.ipa', bytes: ipa, certificate: ios.id as string },
  ];
  const tasks: { fileKey: string; taskId: string; size: number }[] = [];
  for (const p of packages) {
    const upload = await api.upload(p.name, p.bytes);
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    const created = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise', certificate_id: p.certificate });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    tasks.push({ fileKey: upload.body.data.file_key, taskId: created.body.data.task_id, size: p.bytes.length });
  }
  const from = proxy.requests.length;
  const config = loadConfig({
    SIGNET_DATA_DIR: server.dataDir,
    SIGNET_LOG_LEVEL: 'silent',
    SIGNET_WORKER_CONCURRENCY: '1',
    SIGNET_STORAGE: 's3',
    SIGNET_S3_BUCKET: s3.bucket,
    SIGNET_S3_ENDPOINT: proxy.url,
    SIGNET_S3_FORCE_PATH_STYLE: 'true',
    // The test PKI's leaf is issued by a WWDR-like intermediate that Apple's bundled CAs do not hold.
    SIGNET_APPLE_CA_DIR: pki.caDir,
  });
  // No signer overrides: the production EnterpriseSigners on the SignerPool's threads.
  const worker = await startWorkerService(config, { queueTuning: { pollIntervalMs: 50 } });
  try {
    for (const { taskId } of tasks) {
      const task = await waitForTaskEnd(api, taskId, 120_000);
      assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
      assert.ok(task.verification.length > 0);
    }
  } finally {
    await worker.close();
  }
  for (const { fileKey, size } of tasks) {
    const gets = proxy.requests.slice(from).filter((r) => r.method === 'GET' && r.path.includes(`/uploads/${fileKey}`));
    t.diagnostic(`signing ${fileKey}: ${assertNoWholeObject(gets, size)}`);
  }
});

it('the counting proxy sees a whole-object GET for what it is (the check can fail)', async () => {
  const key = `uploads/tmp_${'c'.repeat(24)}`;
  await server.service.blobs.put(key, Readable.from([Buffer.alloc(1000, 1)]));
  const from = proxy.requests.length;
  assert.equal((await text(await server.service.blobs.get(key))).length, 1000);
  const gets = proxy.requests.slice(from).filter((r) => r.method === 'GET');
  assert.throws(() => assertRangedOnly(gets, 1000), /a GET without a range/);
  assert.throws(() => assertNoWholeObject(gets, 1000), /a GET without a range/);
  // A range covering the whole object is a download too.
  const ranged = [{ method: 'GET', path: `/b/${key}`, range: 'bytes=0-999', status: 206, bytes: 1000 }];
  assert.throws(() => assertNoWholeObject(ranged, 1000), /covers the whole object/);
  await server.service.blobs.delete(key);
});
