// A resumed upload, as a CI step killed half way and run again would do it: a 320 MB package,
// the client killed (SIGKILL) mid-upload, then the same command again. Bytes from the client to
// the server are counted by a TCP proxy in between: the second run sends only what the server
// lacks; one task is created and it succeeds.
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { streamedApk } from '../support/app-packages.ts';
import { packAndInstallCli, runCli, type InstalledCli } from '../support/cli-package.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { judgingSigner } from '../support/slow-signer.ts';

const SIZE = 320 * 1024 * 1024;
let server: TestServer;
let cli: InstalledCli;
let work: string;
let proxy: net.Server;
let proxyUrl: string;
/** Bytes the client sent towards the server, per run. */
let clientBytes = 0;

before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'signet-cli-resume-'));
  [server, cli] = await Promise.all([startTestServer({ name: 'cli-resume', overrides: { signers: [judgingSigner('android', 10)] } }), packAndInstallCli()]);
  const api = new Api(server.url, server.key);
  const pki = testPki();
  await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
  const apk = streamedApk(SIZE, { packageName: 'com.example.resume' });
  await pipeline(apk.stream(), createWriteStream(path.join(work, 'big.apk')));
  const target = new URL(server.url);
  proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.on('data', (chunk: Buffer) => {
      clientBytes += chunk.length;
    });
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
});
after(async () => {
  proxy?.close();
  await server?.close();
  await cli?.remove();
  if (work) await rm(work, { recursive: true, force: true });
});

it('a killed upload of 320 MB resumes: the second run sends only the missing bytes, one task, succeeded', { timeout: 600_000 }, async () => {
  const env = { SIGNET_URL: proxyUrl, SIGNET_API_KEY: server.key!, SIGNET_CLI_STATE_DIR: path.join(work, 'state') };
  const args = ['upload', 'big.apk', '--wait', '--json', '--timeout', '5m'];
  clientBytes = 0;
  const first = runCli(process.execPath, cli.main, args, env, {
    cwd: work,
    onStderr: (text) => {
      if (/upload big\.apk: [5-9]\d%/.test(text)) first.kill('SIGKILL');
    },
  });
  const killed = await first;
  assert.equal(killed.code, null, `killed, not finished: ${killed.stderr}`);
  const firstBytes = clientBytes;

  // What the server holds now, asked directly (not through the proxy).
  const state = JSON.parse(await readFile(path.join(work, 'state', 'uploads.json'), 'utf8')) as Record<string, { url: string }>;
  const location = Object.values(state)[0]!.url.replace(proxyUrl, server.url);
  let offset = 0;
  for (let i = 0; i < 50; i += 1) {
    // The server finishes writing what arrived once it sees the connection close.
    const head = await fetch(location, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0', authorization: `Bearer ${server.key}` } });
    assert.equal(head.status, 200);
    const now = Number(head.headers.get('upload-offset'));
    if (now === offset && now > 0) break;
    offset = now;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(offset > SIZE * 0.3 && offset < SIZE, `the server holds ${offset} of ${SIZE} bytes`);

  clientBytes = 0;
  const second = await runCli(process.execPath, cli.main, args, env, { cwd: work });
  assert.equal(second.code, 0, second.stderr);
  const secondBytes = clientBytes;
  const missing = SIZE - offset;
  console.log(`# first run had sent ${firstBytes} bytes when it was killed; the server kept ${offset}; second run sent ${secondBytes} bytes for the ${missing} missing`);
  assert.match(second.stderr, /Resuming the upload at/);
  assert.ok(secondBytes >= missing, 'the rest was sent');
  assert.ok(secondBytes - missing < 64 * 1024, `only the missing bytes plus request headers: ${secondBytes - missing} extra bytes`);

  const result = JSON.parse(second.stdout);
  assert.equal(result.upload.size, SIZE);
  assert.equal(result.task.status, 'succeeded');
  const api = new Api(server.url, server.key);
  const tasks = (await api.get('/v1/tasks?limit=100')).body.data.items.filter((t: any) => t.file_name === 'big.apk');
  assert.equal(tasks.length, 1, 'one task');
  const uploads = await server.service.db.kysely.selectFrom('uploads').select('id').where('filename', '=', 'big.apk').execute();
  assert.equal(uploads.length, 1, 'one upload recorded');
});
