// The GitHub Action (action.yml → packages/cli/dist/action.js on node24), run as GitHub runs it:
// from a copy of the action's files without node_modules, inputs as INPUT_* variables, outputs
// and the job summary written to the GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, against a
// listening Signet. Also: the committed dist/ is exactly what the sources compile to.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { promisify } from 'node:util';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { repoRoot } from '../support/fixtures.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { FAILING_PACKAGE, judgingSigner } from '../support/slow-signer.ts';

const CLI = path.join(repoRoot, 'packages/cli');
let server: TestServer;
let api: Api;
let work: string;
let actionDir: string;

before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'signet-action-'));
  server = await startTestServer({ name: 'action', overrides: { signers: [judgingSigner('android', 200)] } });
  api = new Api(server.url, server.key);
  const pki = testPki();
  await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  // The action as a workflow checks it out: its files, no node_modules.
  actionDir = path.join(work, 'action');
  await mkdir(path.join(actionDir, 'packages/cli'), { recursive: true });
  await cp(path.join(repoRoot, 'action.yml'), path.join(actionDir, 'action.yml'));
  await cp(path.join(CLI, 'dist'), path.join(actionDir, 'packages/cli/dist'), { recursive: true });
  await cp(path.join(CLI, 'package.json'), path.join(actionDir, 'packages/cli/package.json'));
  await mkdir(path.join(work, 'workspace/build'), { recursive: true });
  await writeFile(path.join(work, 'workspace/build/app.apk'), tinyApk({ packageName: 'com.example.action', versionName: '3.0', label: 'Action App' }));
  await writeFile(path.join(work, 'workspace/build/bad.apk'), tinyApk({ packageName: FAILING_PACKAGE }));
});
after(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

interface ActionRun {
  code: number | null;
  stdout: string;
  outputs: Record<string, string>;
  summary: string;
}

async function runAction(inputs: Record<string, string>, name: string): Promise<ActionRun> {
  const outputFile = path.join(work, `${name}.output`);
  const summaryFile = path.join(work, `${name}.summary`);
  await writeFile(outputFile, '');
  await writeFile(summaryFile, '');
  const main = /\n {2}main: (\S+)/.exec(await readFile(path.join(actionDir, 'action.yml'), 'utf8'))![1]!;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_WORKSPACE: path.join(work, 'workspace'),
    RUNNER_TEMP: path.join(work, 'runner-temp'),
  };
  for (const [key, value] of Object.entries(inputs)) env[`INPUT_${key.toUpperCase()}`] = value;
  const child = spawn(process.execPath, [path.join(actionDir, main)], { cwd: path.join(work, 'workspace'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  // GITHUB_OUTPUT's multi-line form: name<<DELIMITER, value lines, DELIMITER.
  const outputs: Record<string, string> = {};
  const lines = (await readFile(outputFile, 'utf8')).split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const match = /^([\w-]+)<<(\S+)$/.exec(lines[i]!);
    if (!match) continue;
    const end = lines.indexOf(match[2]!, i + 1);
    outputs[match[1]!] = lines.slice(i + 1, end).join('\n');
    i = end;
  }
  return { code, stdout, outputs, summary: await readFile(summaryFile, 'utf8') };
}

it('declares the inputs and outputs GitHub reads, and runs node24', async () => {
  const yml = await readFile(path.join(repoRoot, 'action.yml'), 'utf8');
  for (const name of ['url', 'api-key', 'file', 'cert-type', 'notes', 'wait']) assert.match(yml, new RegExp(`\\n  ${name}:\\n    description: `), `input ${name}`);
  for (const name of ['task-id', 'install-url', 'app-url', 'download-url']) assert.match(yml, new RegExp(`\\n  ${name}:\\n    description: `), `output ${name}`);
  assert.match(yml, /\nruns:\n  using: node24\n  main: packages\/cli\/dist\/action\.js\n/);
});

it('the committed dist/ is what the sources compile to', async () => {
  const out = path.join(work, 'fresh-dist');
  await promisify(execFile)(path.join(repoRoot, 'node_modules/.bin/tsc'), ['-p', path.join(CLI, 'tsconfig.json'), '--outDir', out]);
  const names = (await readdir(out)).sort();
  assert.deepEqual((await readdir(path.join(CLI, 'dist'))).sort(), names, 'the same files (run npm run build:cli and commit dist/)');
  for (const name of names) assert.equal(await readFile(path.join(CLI, 'dist', name), 'utf8'), await readFile(path.join(out, name), 'utf8'), `dist/${name} is stale: run npm run build:cli`);
});

it('uploads, waits, writes the outputs and a job summary with the link and the QR image', async () => {
  const run = await runAction({ url: server.url, 'api-key': server.key!, file: 'build/app.apk', 'cert-type': 'enterprise', notes: 'Built by **CI**', wait: 'true' }, 'ok');
  assert.equal(run.code, 0, run.stdout);
  const { outputs } = run;
  assert.match(outputs['task-id'] ?? '', /^tsk_/);
  const task = (await api.get(`/v1/tasks/${outputs['task-id']}`)).body.data;
  assert.equal(task.status, 'succeeded');
  assert.equal(task.notes, 'Built by **CI**');
  assert.equal(outputs['install-url'], task.links.install_url);
  assert.equal(outputs['app-url'], task.links.app_url);
  assert.equal(outputs['download-url'], task.links.download_url);
  assert.equal(outputs.status, 'succeeded');
  assert.match(run.summary, /^### Signet: Action App 3\.0 .*signed$/m);
  assert.ok(run.summary.includes(`<img src="${task.links.qr_code_url}"`), run.summary);
  assert.ok(run.summary.includes(`| Install page | ${task.links.install_url} |`));
  assert.equal((await fetch(task.links.qr_code_url)).headers.get('content-type')?.startsWith('image/svg+xml'), true, 'the QR image is served');
  assert.ok(run.stdout.includes(`::add-mask::${server.key}`), 'the key is masked in the log');
  assert.equal(run.stdout.split(server.key!).length - 1, 1, 'and never printed otherwise');
});

it('a failed task fails the step (exit 1) with an error annotation naming its code', async () => {
  const run = await runAction({ url: server.url, 'api-key': server.key!, file: 'build/bad.apk', wait: 'true' }, 'failed');
  assert.equal(run.code, 1, run.stdout);
  assert.match(run.stdout, /::error title=Signet task failed::apk_invalid: /);
  assert.equal(run.outputs.status, 'failed');
  assert.match(run.summary, /`apk_invalid`/);
});

it('a missing input or a wrong key fails with the CLI\'s exit codes (2, 3)', async () => {
  const missing = await runAction({ url: server.url, 'api-key': server.key! }, 'missing');
  assert.equal(missing.code, 2);
  assert.match(missing.stdout, /::error title=Signet::Input required and not supplied: file/);
  const wrong = await runAction({ url: server.url, 'api-key': `sk_${'y'.repeat(43)}`, file: 'build/app.apk' }, 'wrong');
  assert.equal(wrong.code, 3, wrong.stdout);
});

it('wait: false only creates the task', async () => {
  const run = await runAction({ url: server.url, 'api-key': server.key!, file: 'build/app.apk', wait: 'false', notes: 'no wait' }, 'nowait');
  assert.equal(run.code, 0, run.stdout);
  assert.match(run.outputs['task-id'] ?? '', /^tsk_/);
  assert.equal(run.outputs['install-url'], undefined);
});
