// The two entry points of src/main: an API-only `signet serve` (SIGNET_WORKER_CONCURRENCY=0)
// takes the task and leaves it pending; `signet worker` (startWorkerService: no HTTP) on the same
// data dir signs it.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.ts';
import { startWorkerService, type RunningWorkerService } from '../../src/main/service.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

let server: TestServer | null = null;
let worker: RunningWorkerService | null = null;
after(async () => {
  await worker?.close();
  await server?.close();
});

it('runs tasks in `signet worker` beside an API-only server', { timeout: 60_000 }, async () => {
  server = await startTestServer({ name: 'api-only', env: { SIGNET_WORKER_CONCURRENCY: '0' } });
  const api = new Api(server.url, server.key);
  const pki = testPki();
  const cert = await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  assert.equal(cert.status, 200, JSON.stringify(cert.body));
  const apk = tinyApk({ packageName: 'com.worker.only' });
  const fileKey = (await api.upload('w.apk', apk)).body.data.file_key;
  const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
  const jobs = await server.service.db.kysely.selectFrom('jobs').select(['kind', 'payload_json']).execute();
  assert.ok(jobs.some((job) => job.kind === 'sign_task' && job.payload_json.includes(taskId)), 'the API queued the task');
  assert.equal((await api.get(`/v1/tasks/${taskId}`)).body.data.status, 'pending', 'the API-only node runs no tasks');

  const config = loadConfig({ SIGNET_DATA_DIR: server.dataDir, SIGNET_LOG_LEVEL: 'silent', SIGNET_WORKER_CONCURRENCY: '1' });
  worker = await startWorkerService(config, { signers: [slowCopySigner('android', 10)], queueTuning: { pollIntervalMs: 50 } });
  let task: any;
  for (let i = 0; i < 400; i += 1) {
    task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') break;
    await sleep(50);
  }
  assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
  const download = await fetch(`${server.url}/v1/tasks/${taskId}/artifact`, { headers: { authorization: `Bearer ${server.key}` } });
  assert.deepEqual(Buffer.from(await download.arrayBuffer()), apk, 'the test signer copies its input');
});

it('refuses to start a worker that would run nothing', async () => {
  const config = loadConfig({ SIGNET_DATA_DIR: '/nonexistent-signet-test', SIGNET_WORKER_CONCURRENCY: '0' });
  await assert.rejects(startWorkerService(config), /SIGNET_WORKER_CONCURRENCY of 1 or more/);
});

it('`signet worker` runs until SIGTERM, then exits 0 without serving HTTP', { timeout: 60_000 }, async () => {
  const { spawn } = await import('node:child_process');
  const path = await import('node:path');
  const { repoRoot } = await import('../support/fixtures.ts');
  const { freshDataDir } = await import('../support/server.ts');
  const child = spawn(process.execPath, [path.join(repoRoot, 'src/main/cli.ts'), 'worker'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_DATA_DIR: freshDataDir('worker-cli'), SIGNET_WORKER_CONCURRENCY: '1', SIGNET_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (stderr.includes('signet worker: running 1 signing task(s)')) resolve();
    });
    exited.then((code) => reject(new Error(`exited ${code} before running: ${stderr}`)));
  });
  child.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
  assert.doesNotMatch(stderr, /listening|http:\/\//);
});
