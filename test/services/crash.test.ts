// The crash test: a server child process with 20 tasks in flight is killed with SIGKILL and
// restarted on the same data dir. Every task must end in exactly one terminal state (at most 3
// attempts) and every task's webhook must be delivered, for that one terminal event.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, it } from 'node:test';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { SQLITE_FILE } from '../../src/db/database.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';
import { tempFiles } from '../support/temp-files.ts';

const TASKS = 20;
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
let server: ChildServer | null = null;
const receiver = http.createServer();
after(async () => {
  await server?.stop('SIGKILL');
  receiver.close();
});

it('loses nothing when the server is killed with 20 tasks in flight', { timeout: 300_000 }, async () => {
  const events = new Map<string, string[]>();
  receiver.on('request', (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      events.set(payload.data.task_id, [...(events.get(payload.data.task_id) ?? []), payload.event]);
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const dataDir = freshDataDir('crash');
  const env = { SIGNET_TEST_SIGNER: 'slow', SIGNET_TEST_SIGN_MS: '4000', SIGNET_WORKER_CONCURRENCY: '4', SIGNET_TEST_LEASE_MS: '3000', SIGNET_TEST_POLL_MS: '200', SIGNET_LOG_LEVEL: 'warn', SIGNET_OUTBOUND_ALLOW: '127.0.0.1' };
  server = await spawnServer({ dataDir, env });
  assert.ok(server.key);
  const api = new Api(server.url, server.key);
  const pki = testPki();
  const cert = await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  assert.equal(cert.status, 200, JSON.stringify(cert.body));
  const taskIds: string[] = [];
  for (let i = 0; i < TASKS; i += 1) {
    const fileKey = (await api.upload(`app-${i}.apk`, tinyApk({ packageName: `com.crash.app${i}` }))).body.data.file_key;
    const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', callback_url: callbackUrl });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    taskIds.push(created.body.data.task_id);
  }
  // Kill while tasks are being signed (the slow signer holds each one for 4 s).
  let inFlight = 0;
  for (let i = 0; i < 1200 && inFlight === 0; i += 1) {
    inFlight = (await api.get('/v1/tasks?status=processing&limit=100')).body.data.items.length;
    if (inFlight === 0) await sleep(50);
  }
  assert.ok(inFlight > 0, 'no task was ever processing');
  await server.stop('SIGKILL');
  server = null;

  // Restart on the same data dir with a quicker signer; leases of the killed run expire and
  // their jobs run again.
  server = await spawnServer({ dataDir, env: { ...env, SIGNET_TEST_SIGN_MS: '300' } });
  assert.equal(server.key, null, 'the restart must not bootstrap a second key');
  const restarted = new Api(server.url, api.key);
  const deadline = Date.now() + 240_000;
  let tasks: any[] = [];
  for (;;) {
    const page = await restarted.get('/v1/tasks?limit=100');
    assert.equal(page.status, 200, JSON.stringify(page.body));
    tasks = taskIds.map((id) => page.body.data.items.find((t: any) => t.task_id === id));
    assert.ok(tasks.every(Boolean), 'every task is listed');
    const delivered = tasks.every((t) => (events.get(t.task_id) ?? []).length > 0);
    if (tasks.every((t) => TERMINAL.has(t.status)) && delivered) break;
    if (Date.now() > deadline) assert.fail(`not settled: ${tasks.map((t) => `${t.task_id}:${t.status}`).join(' ')}`);
    await sleep(250);
  }
  for (const task of tasks) {
    assert.ok(task.attempts >= 1 && task.attempts <= 3, `${task.task_id} ran ${task.attempts} times`);
    assert.ok(task.finished_at, `${task.task_id} has no finished_at`);
    const received = new Set(events.get(task.task_id));
    assert.deepEqual([...received], [`task.${task.status}`], `${task.task_id} is ${task.status} but its webhooks said ${[...received]}`);
    if (task.status === 'succeeded') assert.ok(task.artifact && task.artifact.size > 0);
  }
  // Settled means settled: once the queue holds no job of these tasks (no re-run of a killed
  // attempt, no webhook retry is left to run), a later look shows the same state and finish time.
  const queue = new BetterSqlite3(path.join(dataDir, SQLITE_FILE), { readonly: true });
  try {
    const left = queue.prepare("select count(*) as n from jobs where kind in ('sign_task', 'deliver_webhook')");
    for (const until = Date.now() + 60_000; (left.get() as { n: number }).n > 0; ) {
      if (Date.now() > until) assert.fail(`jobs still queued: ${JSON.stringify(queue.prepare('select kind, state, payload_json from jobs').all())}`);
      await sleep(100);
    }
  } finally {
    queue.close();
  }
  for (const task of tasks) {
    const again = (await restarted.get(`/v1/tasks/${task.task_id}`)).body.data;
    assert.equal(again.status, task.status);
    assert.equal(again.finished_at, task.finished_at);
  }
  assert.equal(tasks.filter((t) => t.status === 'succeeded').length, TASKS, 'the test signer always succeeds, so every task must');
  assert.ok(tasks.some((t) => t.attempts >= 2), 'the runs killed mid-task were run again');
  const stopped = await server.stop('SIGTERM');
  server = null;
  assert.equal(stopped, 0);
  assert.deepEqual(tempFiles(dataDir), [], 'nothing of the killed run (partial outputs, uploads) is left in the temp folders');
});
