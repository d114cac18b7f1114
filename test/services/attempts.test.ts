// "At most 3 attempts": a task whose every run dies with its process (SIGKILL from inside the
// signer, like an OOM kill) is run exactly three times across restarts, then fails with
// task_attempts_exhausted, once.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';

let server: ChildServer | null = null;
after(async () => {
  await server?.stop('SIGKILL');
});

it('gives up a task after 3 lost runs with task_attempts_exhausted', { timeout: 300_000 }, async () => {
  const dataDir = freshDataDir('attempts');
  const env = { SIGNET_TEST_SIGNER: 'killing', SIGNET_TEST_LEASE_MS: '1000', SIGNET_TEST_POLL_MS: '200', SIGNET_LOG_LEVEL: 'warn' };
  server = await spawnServer({ dataDir, env: { ...env, SIGNET_WORKER_CONCURRENCY: '0' } });
  const api = new Api(server.url, server.key);
  const pki = testPki();
  await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  const fileKey = (await api.upload('doomed.apk', tinyApk())).body.data.file_key;
  const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
  await server.stop();

  let deaths = 0;
  let task: any = null;
  for (let start = 0; start < 8; start += 1) {
    server = await spawnServer({ dataDir, env });
    const client = new Api(server.url, api.key);
    let exited: unknown = null;
    void server.exited.then((status) => (exited = status));
    // Either this start dies running the task, or (attempts used up) it fails the task.
    for (let i = 0; i < 300 && exited === null && task === null; i += 1) {
      const seen = await client.get(`/v1/tasks/${taskId}`).catch(() => null);
      if (seen?.body?.data?.status === 'failed') task = seen.body.data;
      else await sleep(100);
    }
    if (task !== null) break;
    await server.exited;
    assert.equal(exited, 'SIGKILL');
    deaths += 1;
    server = null;
  }
  assert.equal(deaths, 3, 'each of the three attempts ran, and no fourth');
  assert.equal(task.status, 'failed');
  assert.equal(task.error.code, 'task_attempts_exhausted');
  assert.equal(task.attempts, 3);
});
