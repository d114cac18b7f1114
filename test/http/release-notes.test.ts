// Release notes (#14): a `notes` field (or `release_notes` / `changelog`) on the multipart upload,
// before or after the file, and on task creation; stored with the release, returned by the API,
// rendered safely (Markdown, no raw HTML) on the install page and the history.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

let server: TestServer;
let api: Api;

before(async () => {
  server = await startTestServer({ name: 'release-notes', overrides: { signers: [slowCopySigner('android', 20)] } });
  api = new Api(server.url, server.key);
  const pki = testPki();
  const cert = await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  assert.equal(cert.status, 200, JSON.stringify(cert.body));
});
after(() => server.close());

/** A multipart body whose parts come in the given order (FormData keeps insertion order). */
function form(parts: Array<[string, string | { name: string; data: Buffer }]>) {
  const body = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') body.append(name, value);
    else body.append(name, new Blob([new Uint8Array(value.data)]), value.name);
  }
  return api.request('POST', '/v1/apps/upload', { body });
}

async function succeeded(taskId: string): Promise<any> {
  for (let i = 0; i < 600; i += 1) {
    const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded') return task;
    if (task.status === 'failed' || task.status === 'canceled') assert.fail(JSON.stringify(task));
    await sleep(50);
  }
  assert.fail('task did not finish');
}

const apk = (name: string) => ({ name, data: tinyApk({ packageName: 'com.acme.notes', versionName: '2.0', versionCode: 20, label: 'Notes' }) });

describe('upload', () => {
  it('keeps notes sent before or after the file, under any accepted name', async () => {
    const cases: Array<[string, Array<[string, string | { name: string; data: Buffer }]>]> = [
      ['before', [['notes', 'Fixed the login\r\n\r\n- item'], ['file', apk('a.apk')]]],
      ['after', [['file', apk('b.apk')], ['release_notes', 'Fixed the login\n\n- item']]],
      ['alias', [['changelog', '  Fixed the login\n\n- item  '], ['file', apk('c.apk')]]],
    ];
    for (const [label, parts] of cases) {
      const response = await form(parts);
      assert.equal(response.status, 200, `${label}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.data.notes, 'Fixed the login\n\n- item', label);
      // Stored, not only echoed: a task created from the upload inherits them.
      const created = await api.post('/v1/tasks/create', { file_key: response.body.data.file_key, cert_type: 'enterprise' });
      assert.equal((await api.get(`/v1/tasks/${created.body.data.task_id}`)).body.data.notes, 'Fixed the login\n\n- item', label);
    }
    const none = await form([['file', apk('d.apk')]]);
    assert.equal(none.body.data.notes, null);
  });

  it('refuses notes over 10 KB with 400 notes_too_large and keeps nothing of the upload', async () => {
    const before = await server.service.db.kysely.selectFrom('uploads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    for (const parts of [
      [['notes', 'é'.repeat(5121)], ['file', apk('big.apk')]],
      [['file', apk('big.apk')], ['notes', 'x'.repeat(10_241)]],
      [['file', apk('big.apk')], ['notes', 'x'.repeat(50_000)]],
    ] as Array<Array<[string, string | { name: string; data: Buffer }]>>) {
      const response = await form(parts);
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.equal(response.body.error, 'notes_too_large');
    }
    const exactly = await form([['notes', 'x'.repeat(10_240)], ['file', apk('ok.apk')]]);
    assert.equal(exactly.status, 200, 'exactly 10 KB is accepted');
    const afterCount = await server.service.db.kysely.selectFrom('uploads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(afterCount.n), Number(before.n) + 1, 'refused uploads leave no row');
  });

  it('refuses notes given twice and unknown fields', async () => {
    const twice = await form([['notes', 'a'], ['file', apk('x.apk')], ['changelog', 'b']]);
    assert.equal(twice.status, 400);
    assert.equal(twice.body.error, 'invalid_request');
    const unknown = await form([['file', apk('x.apk')], ['comment', 'b']]);
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error, 'invalid_request');
    assert.match(unknown.body.message, /comment is not a known field/);
  });
});

describe('tasks', () => {
  it('takes notes on creation (any accepted name) over the upload\'s, and refuses two names or 10 KB+', async () => {
    const fileKey = (await form([['notes', 'from upload'], ['file', apk('t.apk')]])).body.data.file_key;
    const started: string[] = [];
    for (const field of ['notes', 'release_notes', 'changelog']) {
      const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', [field]: `from ${field}` });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal((await api.get(`/v1/tasks/${created.body.data.task_id}`)).body.data.notes, `from ${field}`);
      started.push(created.body.data.task_id);
    }
    // Finished here: a release of this version made later, by a task still running, would be the
    // newest one in the next test's history.
    for (const taskId of started) await succeeded(taskId);
    const both = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', notes: 'a', changelog: 'b' });
    assert.deepEqual([both.status, both.body.error], [400, 'invalid_request']);
    const large = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', notes: '啊'.repeat(3414) });
    assert.deepEqual([large.status, large.body.error], [400, 'notes_too_large']);
  });

  it('shows the notes as safe Markdown on the install page and the history, and in the app\'s releases', async () => {
    const notes = '## Changes\n\n- **Faster** start\n- <script>alert(1)</script>\n\n[site](https://example.com) [bad](javascript:alert(1))';
    const fileKey = (await form([['file', apk('p.apk')]])).body.data.file_key;
    const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', notes })).body.data.task_id;
    const task = await succeeded(taskId);
    assert.equal(task.notes, notes);
    assert.match(task.links.install_url, /\/d\/[0-9A-Za-z]+$/);
    const page = await fetch(task.links.install_url).then((r) => r.text());
    assert.match(page, /<h2>Changes<\/h2>/);
    assert.match(page, /<li><strong>Faster<\/strong> start<\/li>/);
    assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(page, /<script>alert/);
    assert.match(page, /<a href="https:\/\/example.com" rel="nofollow noopener noreferrer">site<\/a>/);
    assert.doesNotMatch(page, /href="javascript:/);
    const history = await fetch(`${task.links.app_url}/history`).then((r) => r.text());
    assert.match(history, /<details class="notes"><summary>[^<]+<\/summary><div class="body"><h2>Changes<\/h2>/);
    const app = (await api.get(`/v1/apps/${task.app_id}`)).body.data;
    assert.equal(app.releases.find((r: any) => r.task_id === taskId).notes, notes);
  });
});
