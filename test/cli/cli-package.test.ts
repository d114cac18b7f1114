// The client CLI as a pipeline runs it: packed, installed from the tarball into an empty folder,
// run on the machine's Node 20 and on Node 24 against a listening Signet: upload --wait → exit 0
// with the links and a QR code; a task that fails → exit 1 with its code; a wrong key → exit 3;
// usage errors → 2; an unreachable server → 4 after its retries. The key is never printed.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { packAndInstallCli, runCli, type InstalledCli } from '../support/cli-package.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { FAILING_PACKAGE, judgingSigner } from '../support/slow-signer.ts';

const NODE_20 = '/usr/bin/node';
const runtimes = [
  { name: `Node ${process.versions.node}`, node: process.execPath },
  ...(existsSync(NODE_20) ? [{ name: 'system Node (/usr/bin/node)', node: NODE_20 }] : []),
];

let server: TestServer;
let api: Api;
let cli: InstalledCli;
let work: string;
let env: Record<string, string>;

before(async () => {
  [server, cli, work] = await Promise.all([
    startTestServer({ name: 'cli', overrides: { signers: [judgingSigner('android', 300)] } }),
    packAndInstallCli(),
    mkdtemp(path.join(tmpdir(), 'signet-cli-work-')),
  ]);
  api = new Api(server.url, server.key);
  const pki = testPki();
  await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  // Resumable-upload state goes to the test's folder, not the user's cache.
  env = { SIGNET_URL: server.url, SIGNET_API_KEY: server.key!, SIGNET_CLI_STATE_DIR: path.join(work, 'state') };
  await writeFile(path.join(work, 'good.apk'), tinyApk({ packageName: 'com.example.cli', versionName: '1.4', label: 'Cli App' }));
  await writeFile(path.join(work, 'bad.apk'), tinyApk({ packageName: FAILING_PACKAGE }));
  await writeFile(path.join(work, 'notes.md'), '## 1.4\n\n- faster\n');
});
after(async () => {
  await server?.close();
  await cli?.remove();
  if (work) await rm(work, { recursive: true, force: true });
});

it('installs from the tarball with its compiled JavaScript and no TypeScript sources', async () => {
  assert.ok(existsSync(cli.main));
  assert.ok(existsSync(path.join(cli.dir, 'node_modules', '.bin', 'signet-cli')));
  const manifest = JSON.parse(await readFile(path.join(cli.dir, 'node_modules', 'signet-cli', 'package.json'), 'utf8'));
  assert.deepEqual(Object.keys(manifest.dependencies ?? {}), ['uqr'], 'one small dependency');
  assert.equal(existsSync(path.join(cli.dir, 'node_modules', 'signet-cli', 'src')), false);
});

for (const { name, node } of runtimes) {
  describe(name, () => {
    it('--version prints the package version', async () => {
      const result = await runCli(node, cli.main, ['--version'], {});
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), JSON.parse(await readFile(path.join(cli.dir, 'node_modules', 'signet-cli', 'package.json'), 'utf8')).version);
    });

    it('upload --wait: exit 0, the install page, the app page and a QR code; the same step again gets the same task', async () => {
      const args = ['upload', 'good.apk', '--wait', '--notes-file', 'notes.md', '--timeout', '2m'];
      const result = await runCli(node, cli.main, args, env, { cwd: work });
      assert.equal(result.code, 0, result.stderr);
      const install = /^Install page: (\S+)$/m.exec(result.stdout)?.[1];
      const appPage = /^App page: +(\S+)$/m.exec(result.stdout)?.[1];
      assert.match(install ?? '', /\/d\/[0-9A-Za-z]+$/, result.stdout);
      assert.match(appPage ?? '', /\/a\/[0-9A-Za-z]+$/);
      assert.match(result.stdout, /^Download: \S+\/download$/m);
      assert.match(result.stdout, /[▀▄█]{10,}/, 'a QR code drawn with block characters');
      assert.match(result.stderr, /upload good\.apk: 100%|upload good\.apk.*100%/, 'progress lines (not a terminal: plain lines)');
      const taskId = /Task (tsk_\w+) created/.exec(result.stderr)?.[1];
      assert.ok(taskId, result.stderr);
      const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
      assert.equal(task.status, 'succeeded');
      assert.equal(task.notes, '## 1.4\n\n- faster');
      assert.equal(task.links.install_url, install);
      assert.equal((await fetch(install!)).status, 200, 'the printed link opens');

      const again = await runCli(node, cli.main, [...args, '--json'], env, { cwd: work });
      assert.equal(again.code, 0, again.stderr);
      const json = JSON.parse(again.stdout);
      assert.equal(json.task.task_id, taskId, 'the Idempotency-Key from the file\'s SHA-256 and the options gives the first task back');
      assert.equal(json.task.links.install_url, install);
      for (const output of [result.stdout, result.stderr, again.stdout, again.stderr]) assert.ok(!output.includes(server.key!), 'the key is never printed');
    });

    it('a task that fails: exit 1 with its error code', async () => {
      const result = await runCli(node, cli.main, ['upload', 'bad.apk', '--wait'], env, { cwd: work });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /Task tsk_\w+ failed: apk_invalid: /);
    });

    it('a wrong key: exit 3, and the key is not printed', async () => {
      const wrong = `sk_${'x'.repeat(43)}`;
      const result = await runCli(node, cli.main, ['upload', 'good.apk', '--wait'], { ...env, SIGNET_API_KEY: wrong }, { cwd: work });
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, /unauthorized/);
      assert.ok(!result.stderr.includes(wrong) && !result.stdout.includes(wrong));
      const list = await runCli(node, cli.main, ['tasks', 'list'], { ...env, SIGNET_API_KEY: wrong });
      assert.equal(list.code, 3);
    });

    it('usage errors: exit 2', async () => {
      for (const args of [['upload'], ['upload', 'good.apk', '--cert-type', 'adhoc'], ['upload', 'missing.apk'], ['upload', 'good.apk', '--bogus'], ['frobnicate'], ['upload', 'good.apk', '--timeout', 'soon']]) {
        const result = await runCli(node, cli.main, args, env, { cwd: work });
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      }
      const noConfig = await runCli(node, cli.main, ['tasks', 'list'], {});
      assert.equal(noConfig.code, 2);
      assert.match(noConfig.stderr, /SIGNET_URL/);
    });

    it('an unreachable server: exit 4 after its retries', async () => {
      const closed = await new Promise<number>((resolve) => {
        const probe = net.createServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as net.AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const result = await runCli(node, cli.main, ['tasks', 'list', '--retries', '2'], { ...env, SIGNET_URL: `http://127.0.0.1:${closed}` });
      assert.equal(result.code, 4, result.stderr);
      assert.equal(result.stderr.match(/retrying in/g)?.length, 2, result.stderr);
      assert.match(result.stderr, /ECONNREFUSED/);
    });

    it('tasks get / list / cancel and link', async () => {
      const taskId = (await api.get('/v1/tasks?status=succeeded&limit=1')).body.data.items[0].task_id;
      const got = await runCli(node, cli.main, ['tasks', 'get', taskId, '--json'], env);
      assert.equal(got.code, 0, got.stderr);
      const task = JSON.parse(got.stdout);
      assert.equal(task.task_id, taskId);
      const list = await runCli(node, cli.main, ['tasks', 'list', '--status', 'failed'], env);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /tsk_\w+ +failed +android .*apk_invalid/);
      const cancel = await runCli(node, cli.main, ['tasks', 'cancel', taskId], env);
      assert.equal(cancel.code, 1, 'a finished task cannot be canceled');
      assert.match(cancel.stderr, /task_not_cancelable/);
      const missing = await runCli(node, cli.main, ['tasks', 'get', 'tsk_nope'], env);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /task_not_found/);

      const dst = task.links.distribution_id;
      const changed = await runCli(node, cli.main, ['link', dst, '--password', 'open sesame', '--expires', '7d', '--max-downloads', '5', '--json'], env);
      assert.equal(changed.code, 0, changed.stderr);
      const link = JSON.parse(changed.stdout);
      assert.equal(link.password_protected, true);
      assert.equal(link.max_downloads, 5);
      assert.ok(Math.abs(Date.parse(link.expires_at) - (Date.now() + 7 * 86_400_000)) < 60_000);
      const reset = await runCli(node, cli.main, ['link', dst, '--no-password', '--expires', 'never', '--max-downloads', 'unlimited'], env);
      assert.equal(reset.code, 0, reset.stderr);
      assert.match(reset.stdout, /Password: +no\nExpires: +never\nDownloads: +\d+\n/);
    });
  });
}
