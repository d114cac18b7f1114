// GET /v1/tasks/{id}/events: server-sent events of a task's progress, ending with the whole task.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { FAILING_PACKAGE, judgingSigner } from '../support/slow-signer.ts';

let server: TestServer;
let api: Api;

before(async () => {
  server = await startTestServer({ name: 'task-events', overrides: { signers: [judgingSigner('android', 700)] } });
  api = new Api(server.url, server.key);
  const pki = testPki();
  await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
});
after(() => server.close());

interface Sse {
  id?: string;
  event: string;
  data: any;
}

/** Reads a whole event stream (until the server ends it), parsed per the SSE format. */
async function readEvents(taskId: string, key: string | null = server.key): Promise<{ status: number; type: string | null; events: Sse[]; comments: number; body: string }> {
  const response = await fetch(`${server.url}/v1/tasks/${taskId}/events`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const body = await response.text();
  const events: Sse[] = [];
  let comments = 0;
  for (const block of body.split('\n\n').filter((b) => b !== '')) {
    const fields: Record<string, string> = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments += 1;
      const at = line.indexOf(': ');
      if (at > 0) fields[line.slice(0, at)] = line.slice(at + 2);
    }
    if (fields.event) events.push({ ...(fields.id ? { id: fields.id } : {}), event: fields.event, data: JSON.parse(fields.data ?? 'null') });
  }
  return { status: response.status, type: response.headers.get('content-type'), events, comments, body };
}

async function createTask(packageName: string): Promise<string> {
  const fileKey = (await api.upload('e.apk', tinyApk({ packageName }))).body.data.file_key;
  const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body.data.task_id;
}

it('streams status changes, then the succeeded task with its links, then ends', async () => {
  const taskId = await createTask('com.example.events');
  const { status, type, events, body } = await readEvents(taskId);
  assert.equal(status, 200);
  assert.match(type ?? '', /^text\/event-stream/);
  assert.match(body, /^retry: \d+\n\n/);
  const statuses = events.filter((e) => e.event === 'status').map((e) => e.data.status);
  assert.deepEqual(statuses, ['pending', 'processing', 'succeeded'].slice(['pending', 'processing', 'succeeded'].indexOf(statuses[0])), `statuses ${statuses.join(',')}`);
  assert.ok(statuses.includes('processing'), 'the 700 ms signing run is seen as processing');
  assert.deepEqual(events.map((e) => e.id), events.map((_, i) => String(i + 1)), 'ids count up');
  const last = events.at(-1)!;
  assert.equal(last.event, 'task');
  assert.equal(last.data.task_id, taskId);
  assert.equal(last.data.status, 'succeeded');
  assert.deepEqual(last.data, (await api.get(`/v1/tasks/${taskId}`)).body.data, 'the final event is the task as GET shows it');
  assert.match(last.data.links.install_url, /\/d\//);
});

it('ends a failed task with its error code; an ended task answers at once', async () => {
  const taskId = await createTask(FAILING_PACKAGE);
  const { events } = await readEvents(taskId);
  const last = events.at(-1)!;
  assert.equal(last.event, 'task');
  assert.equal(last.data.status, 'failed');
  assert.equal(last.data.error.code, 'apk_invalid');
  assert.equal(last.data.links, null);
  const again = await readEvents(taskId);
  assert.deepEqual(again.events.map((e) => [e.event, e.data.status]), [['status', 'failed'], ['task', 'failed']]);
});

it('answers 404 task_not_found (JSON) for an unknown task and 401 without a key', async () => {
  const missing = await readEvents('tsk_doesnotexist');
  assert.equal(missing.status, 404);
  assert.equal(JSON.parse(missing.body).error, 'task_not_found');
  const anonymous = await readEvents('tsk_doesnotexist', null);
  assert.equal(anonymous.status, 401);
});
