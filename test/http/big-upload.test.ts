// The size limit on a real server child process: 2 GiB + 1 byte is refused with 413 while the
// server's memory stays flat and nothing of the file remains; 1.5 GiB goes through with the
// right size and SHA-256. Both bodies are generated while sending (never held in memory).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { after, before, it } from 'node:test';
import { Api, streamUpload } from '../support/api-client.ts';
import { patternStream, streamedApk } from '../support/app-packages.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';

const LIMIT = 2 * 1024 ** 3;
const MB = 1024 * 1024;
let server: ChildServer;
let dataDir: string;

before(async () => {
  dataDir = freshDataDir('big-upload');
  server = await spawnServer({ dataDir, env: { SIGNET_TEST_SIGNER: 'none', SIGNET_LOG_LEVEL: 'warn' } });
});
after(() => server.stop());

function filesUnder(dir: string): Array<{ file: string; size: number }> {
  const out: Array<{ file: string; size: number }> = [];
  const walk = (d: string) => {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(d, name);
      const stat = statSync(full);
      if (stat.isDirectory()) walk(full);
      // The live server's temp-folder marker is not a file of the upload.
      else if (name !== 'owner.json') out.push({ file: path.relative(dir, full), size: stat.size });
    }
  };
  walk(dir);
  return out;
}

it('refuses 2 GiB + 1 byte with 413 file_too_large, in bounded memory, leaving nothing behind', { timeout: 600_000 }, async () => {
  const response = await streamUpload(server.url, server.key!, 'huge.apk', LIMIT + 1, patternStream(LIMIT + 1));
  assert.equal(response.status, 413, JSON.stringify(response.body));
  assert.deepEqual(response.body, { code: 413, error: 'file_too_large', message: response.body.message });
  const peak = server.peakRss();
  assert.ok(peak < 200 * MB, `server peak RSS ${Math.round(peak / MB)} MB`);
  console.log(`# 2 GiB + 1 refused; server peak RSS ${Math.round(peak / MB)} MB`);
  const api = new Api(server.url, server.key);
  assert.equal((await api.get('/v1/apps')).body.data.items.length, 0);
  assert.deepEqual(filesUnder(path.join(dataDir, 'blobs')), [], 'no partial file remains');
});

it('accepts 1.5 GiB with the right size and sha256', { timeout: 600_000 }, async () => {
  const size = 1.5 * 1024 ** 3;
  const apk = streamedApk(size, { packageName: 'com.big.upload' });
  const hash = createHash('sha256');
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const response = await streamUpload(server.url, server.key!, 'big.apk', size, apk.stream().pipe(tap));
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.equal(response.body.data.size, size);
  assert.equal(response.body.data.sha256, hash.digest('hex'));
  assert.equal(response.body.data.bundle_id, 'com.big.upload');
  const peak = server.peakRss();
  assert.ok(peak < 200 * MB, `server peak RSS ${Math.round(peak / MB)} MB`);
  console.log(`# 1.5 GiB stored; server peak RSS ${Math.round(peak / MB)} MB`);
  const stored = filesUnder(path.join(dataDir, 'blobs'));
  assert.deepEqual(stored.map((f) => f.size), [size], JSON.stringify(stored));
});
