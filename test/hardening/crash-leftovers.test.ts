// Issue 12 §5: after kill -9 with uploads streaming and tasks mid-signing, the restart removes
// every temporary byte the dead process left, whatever its age; a live process's files are never
// swept (several processes may share a data dir).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProcessScratch, sweepDeadOwners } from '../../src/storage/scratch.ts';
import { Api, streamUpload } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';
import { tempBytes, tempFiles } from '../support/temp-files.ts';

let server: ChildServer | null = null;
after(async () => {
  await server?.stop('SIGKILL');
});

it('kill -9 with uploads and signing in flight, then restart: 0 orphan bytes', { timeout: 180_000 }, async () => {
  const dataDir = freshDataDir('crash-leftovers');
  const env = { SIGNET_TEST_SIGNER: 'writing', SIGNET_TEST_SIGN_MS: '60000', SIGNET_WORKER_CONCURRENCY: '2', SIGNET_LOG_LEVEL: 'warn' };
  server = await spawnServer({ dataDir, env });
  const api = new Api(server.url, server.key);
  const pki = testPki();
  assert.equal((await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } })).status, 200);
  // Tasks that write half an output, then hold it.
  for (let i = 0; i < 2; i += 1) {
    const fileKey = (await api.upload(`t${i}.apk`, tinyApk({ packageName: `com.leftover.app${i}` }))).body.data.file_key;
    assert.equal((await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' })).status, 200);
  }
  // Uploads streaming 64 KiB every 20 ms.
  const streams = Array.from({ length: 3 }, () => new Readable({ read() { setTimeout(() => this.push(Buffer.alloc(64 * 1024, 3)), 20); } }));
  const uploads = streams.map((s, i) => streamUpload(server!.url, server!.key!, `big${i}.apk`, 512 * 1024 * 1024, s).catch((e: Error) => e));
  for (let i = 0; i < 600 && !(tempFiles(dataDir).filter((f) => f.path.endsWith('.part')).length >= 3 && tempFiles(dataDir).some((f) => f.path.endsWith('.apk'))); i += 1) await sleep(100);
  const before = tempBytes(dataDir);
  assert.ok(tempFiles(dataDir).filter((f) => f.path.endsWith('.part')).length >= 3, JSON.stringify(tempFiles(dataDir)));
  assert.ok(tempFiles(dataDir).some((f) => f.path.endsWith('signed.apk')), 'a task attempt is mid-write');
  assert.ok(before > 1024 * 1024, `${before} temp bytes before the kill`);

  await server.stop('SIGKILL');
  for (const s of streams) s.destroy();
  await Promise.all(uploads);
  assert.ok(tempBytes(dataDir) >= before, 'a killed process cleans nothing up');

  // Restart without workers: nothing new is written, so whatever remains would be an orphan.
  server = await spawnServer({ dataDir, env: { ...env, SIGNET_WORKER_CONCURRENCY: '0' } });
  assert.equal(tempBytes(dataDir), 0, JSON.stringify(tempFiles(dataDir)));
  const markers = tempFiles(dataDir).filter((f) => f.path.endsWith('owner.json'));
  assert.equal(markers.length, 2, 'only the live process owns folders now (one under tmp/, one under blobs/.tmp/)');
  assert.equal(await server.stop('SIGTERM'), 0);
  assert.deepEqual(tempFiles(dataDir), [], 'a graceful stop removes its own folders too');
});

it('sweeps only owners that are provably dead', async () => {
  const root = path.join(freshDataDir('sweep-owners'), 'tmp');
  const live = await ProcessScratch.open(root);
  writeFileSync(path.join(await live.folder('busy'), 'work.bin'), Buffer.alloc(1000));
  // A process that has exited.
  const child = spawn(process.execPath, ['-e', '0']);
  const deadPid = child.pid!;
  await new Promise((resolve) => child.once('exit', resolve));
  const marker = (name: string, fields: Record<string, unknown>) => {
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'owner.json'), JSON.stringify({ host: os.hostname(), bootId: null, pid: process.pid, pidStart: null, createdAt: new Date().toISOString(), ...fields }));
    writeFileSync(path.join(dir, 'left.bin'), Buffer.alloc(500));
  };
  marker('dead-pid', { pid: deadPid });
  marker('other-boot', { bootId: 'not-this-boot' });
  marker('other-host', { host: 'some-other-host', pid: deadPid });
  marker('reused-pid', { pidStart: '1' });
  mkdirSync(path.join(root, 'unmarked-fresh'));
  const freed = await sweepDeadOwners(root);
  const left = tempFiles(path.dirname(root)).map((f) => f.path.split(path.sep)[1]);
  assert.ok(left.includes(path.basename(live.dir)), 'the live process keeps its files');
  assert.ok(left.includes('other-host'), 'another host\'s folder is left alone');
  for (const gone of ['dead-pid', 'reused-pid']) assert.ok(!left.includes(gone), `${gone} swept`);
  if (os.platform() === 'linux') assert.ok(!left.includes('other-boot'), 'a previous boot\'s folder is swept');
  assert.ok(freed >= 1000);
  await live.close();
});
