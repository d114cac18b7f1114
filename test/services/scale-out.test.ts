// Scale-out mode end to end: two `signet serve` processes share one PostgreSQL database
// (graphile-worker queue) and one S3 bucket (s3rver). The API-only node takes the upload and the
// task; the worker node signs it; either node serves the result, and webhooks and the artifact
// come out the same as in the single-process mode.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { createTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { startS3rver, type TestS3 } from '../support/s3rver.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';

let database: TestPostgres;
let s3: TestS3;
const servers: ChildServer[] = [];

before(async () => {
  database = await createTestPostgres();
  s3 = await startS3rver();
});
after(async () => {
  for (const server of servers) await server.stop();
  await s3.close();
  await database.drop();
});

it('runs API and worker nodes on PostgreSQL + S3', { timeout: 180_000 }, async () => {
  const shared = {
    SIGNET_DATABASE_URL: database.url,
    SIGNET_STORAGE: 's3',
    SIGNET_S3_BUCKET: s3.bucket,
    SIGNET_S3_ENDPOINT: s3.endpoint,
    SIGNET_S3_FORCE_PATH_STYLE: 'true',
    SIGNET_MASTER_KEY: 'a'.repeat(64),
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    SIGNET_TEST_SIGNER: 'slow',
    SIGNET_TEST_SIGN_MS: '200',
    SIGNET_LOG_LEVEL: 'warn',
  };
  const apiNode = await spawnServer({ dataDir: freshDataDir('scale-api'), env: { ...shared, SIGNET_WORKER_CONCURRENCY: '0' } });
  servers.push(apiNode);
  assert.ok(apiNode.key, 'the first node bootstraps the account');
  const workerNode = await spawnServer({ dataDir: freshDataDir('scale-worker'), env: { ...shared, SIGNET_WORKER_CONCURRENCY: '2' } });
  servers.push(workerNode);
  assert.equal(workerNode.key, null, 'the second node finds the account in the shared database');

  const api = new Api(apiNode.url, apiNode.key);
  const pki = testPki();
  const cert = await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  assert.equal(cert.status, 200, JSON.stringify(cert.body));
  const apk = tinyApk({ packageName: 'com.scale.out' });
  const upload = await api.upload('scale.apk', apk);
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  const created = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise' });
  const taskId = created.body.data.task_id;

  const other = new Api(workerNode.url, apiNode.key);
  let task: any;
  for (let i = 0; i < 600; i += 1) {
    task = (await other.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') break;
    await sleep(100);
  }
  assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
  const download = await fetch(`${apiNode.url}/v1/tasks/${taskId}/artifact`, { headers: { authorization: `Bearer ${apiNode.key}` } });
  const bytes = Buffer.from(await download.arrayBuffer());
  assert.equal(createHash('sha256').update(bytes).digest('hex'), task.artifact.sha256);
  assert.deepEqual(bytes, apk, 'the test signer copies its input');
  const ready = await api.as(null).get('/readyz');
  assert.equal(ready.status, 200);
});
