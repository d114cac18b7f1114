// `signet serve` as users run it (./bin/signet serve): until a console user exists, each start
// prints a one-time setup link on the terminal (stderr, not the JSON log on stdout);
// SIGTERM shuts down cleanly, aborting uploads in flight (nothing partial left) and handing a
// running task back to the queue, which finishes it after the restart.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api, streamUpload } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { repoRoot } from '../support/fixtures.ts';
import { testPki } from '../support/pki.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';

let running: ChildServer | null = null;
// Servers started by serveOnce: a failed assertion must not leave one running, or its pipes keep
// this test file's process alive and the whole run waits for it.
const started = new Set<ChildProcess>();
after(async () => {
  await running?.stop('SIGKILL');
  for (const child of started) child.kill('SIGKILL');
});

function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: string[] = [];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const name of entries) {
      const full = path.join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      // A live process's temp-folder marker (removed when it stops) is not data.
      else if (name !== 'owner.json') out.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return out.sort();
}

/** The first of `lines` (still being filled) matching `pattern`, once it is there (up to 10 s). */
async function lineMatching(lines: readonly string[], pattern: RegExp): Promise<string | undefined> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const found = lines.find((l) => pattern.test(l.trim()));
    if (found !== undefined) return found;
    await sleep(50);
  }
  return undefined;
}

async function serveOnce(dataDir: string): Promise<{ lines: string[]; errors: string[]; url: string; stop: () => Promise<number | null> }> {
  const child = spawn(path.join(repoRoot, 'bin/signet'), ['serve'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_DATA_DIR: dataDir, SIGNET_PORT: '0', SIGNET_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  const lines: string[] = [];
  const errors: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => errors.push(line));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  exited.then(() => started.delete(child));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (line.includes('"signet listening"')) resolve(JSON.parse(line).url);
    });
    exited.then((code) => reject(new Error(`exited ${code}: ${lines.join('\n')}`)));
  });
  return { lines, errors, url, stop: () => (child.kill('SIGTERM'), exited) };
}

it('is what `npm start` runs', () => {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  assert.equal(pkg.scripts.start, './bin/signet serve');
  assert.equal(pkg.bin.signet, './bin/signet');
});

it('prints a one-time setup link on the terminal (not the log) until the owner exists, and logs JSON without secrets', async () => {
  const dataDir = freshDataDir('serve');
  const first = await serveOnce(dataDir);
  // stdout (where "listening" is logged) and stderr (the link) are separate pipes: the link may
  // arrive a moment after the log line.
  const linkLine = await lineMatching(first.errors, /\/setup\?token=[A-Za-z0-9_-]{43}$/);
  assert.ok(linkLine, first.errors.join('\n'));
  const link = new URL(linkLine.trim());
  const token = link.searchParams.get('token')!;
  assert.equal(link.pathname, '/setup');
  assert.ok(!first.lines.some((l) => l.includes(token)), 'the setup token is not in the JSON log stream');
  assert.ok(!first.lines.some((l) => /^sk_/.test(l)), 'no API key is printed any more');

  // The link creates the owner; the owner's session makes an API key (as the console does).
  const setup = await fetch(`${first.url}/v1/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, email: 'owner@example.com', password: 'correct horse battery' }),
  });
  assert.equal(setup.status, 200);
  const cookie = setup.headers.getSetCookie().find((c) => c.startsWith('signet_session='))!.split(';')[0]!;
  const session = (await setup.json()).data;
  const made = await fetch(`${first.url}/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': session.csrf_token },
    body: JSON.stringify({ label: 'ci', scopes: ['upload', 'tasks:read', 'tasks:write', 'certificates:write'] }),
  });
  assert.equal(made.status, 200);
  const key = (await made.json()).data.key as string;
  const api = new Api(first.url, key);
  assert.equal((await api.get('/v1/tasks')).status, 200);
  assert.equal((await api.as(`sk_${'x'.repeat(43)}`).get('/v1/tasks')).status, 401);
  const pki = testPki();
  const p12 = pki.p12(pki.androidRsa, { password: 'Hunter2-distinctive' });
  assert.equal((await api.form('/v1/certificates', { kind: 'android', password: 'Wrong-distinctive', file: { name: 'k.p12', data: p12 } })).status, 422);
  assert.equal((await api.form('/v1/certificates', { kind: 'android', password: 'Hunter2-distinctive', file: { name: 'k.p12', data: p12 } })).status, 200);
  assert.equal(await first.stop(), 0);
  const output = [...first.lines, ...first.errors];
  assert.ok(!output.some((l) => l.includes('distinctive') || l.includes('correct horse')), 'passwords are never logged');
  const logs = first.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  const completed = logs.filter((l) => l.msg === 'request completed');
  assert.ok(completed.length >= 2 && completed.every((l) => /^req_/.test(l.request_id)));
  assert.ok(!output.some((l) => l.includes(key)), 'the key appears nowhere in the output');
  assert.ok(!output.some((l) => l.includes(cookie.split('=')[1]!)), 'session cookies are never logged');
  assert.ok(!output.some((l) => l.includes('x'.repeat(43))), 'presented keys are never logged');
  assert.ok(files(dataDir).includes('master.key'));
  assert.equal(statSync(path.join(dataDir, 'master.key')).mode & 0o777, 0o600);

  const second = await serveOnce(dataDir);
  assert.ok(!second.errors.some((l) => l.includes('/setup?token=')), 'no setup link once the owner exists');
  assert.equal((await new Api(second.url, key).get('/v1/tasks')).status, 200);
  const used = await fetch(`${second.url}/v1/setup?token=${token}`);
  assert.deepEqual((await used.json()).data, { needed: false, token_valid: false, existing_accounts: [] });
  assert.equal(await second.stop(), 0);
});

it('on SIGTERM aborts uploads in flight and hands running tasks back to the queue', { timeout: 180_000 }, async () => {
  const dataDir = freshDataDir('graceful');
  running = await spawnServer({ dataDir, env: { SIGNET_TEST_SIGNER: 'slow', SIGNET_TEST_SIGN_MS: '60000' } });
  const api = new Api(running.url, running.key);
  const pki = testPki();
  await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  const fileKey = (await api.upload('g.apk', tinyApk())).body.data.file_key;
  const taskId = (await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).body.data.task_id;
  for (let i = 0; i < 400 && (await api.get(`/v1/tasks/${taskId}`)).body.data.status !== 'processing'; i += 1) await sleep(50);
  assert.equal((await api.get(`/v1/tasks/${taskId}`)).body.data.status, 'processing');
  const blobsBefore = files(path.join(dataDir, 'blobs'));

  // An upload that trickles forever: it is in flight when the signal arrives.
  const trickle = new Readable({
    read() {
      setTimeout(() => this.push(Buffer.alloc(64 * 1024, 1)), 20);
    },
  });
  const upload = streamUpload(running.url, running.key!, 'slow.apk', 1024 * 1024 * 1024, trickle).catch((error: Error) => error);
  await sleep(1500);
  const stopped = running.stop('SIGTERM');
  const outcome = await upload;
  assert.equal(await stopped, 0);
  running = null;
  if (!(outcome instanceof Error)) assert.equal(outcome.status, 503);
  assert.deepEqual(files(path.join(dataDir, 'blobs')), blobsBefore, 'no partial upload remains');

  running = await spawnServer({ dataDir, env: { SIGNET_TEST_SIGNER: 'slow', SIGNET_TEST_SIGN_MS: '100' } });
  const again = new Api(running.url, api.key);
  let task: any;
  for (let i = 0; i < 600; i += 1) {
    task = (await again.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') break;
    await sleep(100);
  }
  assert.equal(task.status, 'succeeded');
  assert.equal(task.attempts, 1, 'a handed-back run does not consume an attempt');
});
