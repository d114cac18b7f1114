// `npm run bench:upload`: one package uploaded through Signet (`signet serve`, started exactly as
// `npm start` starts it) as multipart (POST /v1/apps/upload) and as a resumable tus upload
// (POST + PATCH /v1/uploads, which then inspects and stores the file like the multipart route),
// and through a bare node:http + busboy pipe-to-disk server, in the same run, alternating.
// Prints the throughputs, their ratios, and each server's peak RSS (VmHWM).
// Targets: multipart/bare >= 0.9, tus/multipart >= 0.9, Signet peak RSS <= 150 MB for 2 GiB.
// The default size is 512 MiB (this machine is shared); `--size=2048` (MiB) runs the full 2 GiB.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import http from 'node:http';
import type { Readable } from 'node:stream';
import { streamUpload, type ApiResponse } from '../test/support/api-client.ts';
import { streamedApk } from '../test/support/app-packages.ts';
import { repoRoot, testOutputDir } from '../test/support/fixtures.ts';
import { productionEnv, productionNodeFlags } from '../test/support/production-node.ts';

const SIZE = Number(process.argv.find((a) => a.startsWith('--size='))?.slice('--size='.length) ?? 512) * 1024 * 1024;
const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? 3);
const MiB = 1024 * 1024;

function peakRss(child: ChildProcess): number {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) the process has used so far: less sensitive to a busy machine than wall time. */
function cpuSeconds(child: ChildProcess): number {
  try {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

async function start(args: string[], env: Record<string, string>, ready: (line: string, lines: string[]) => string | null): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const found = ready(line, lines);
      if (found) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${lines.join('\n')}`)));
  });
  return { child, url, lines };
}

/** A tus 1.0 upload in one PATCH: create, then stream every byte; the last answer is the upload's. */
async function tusUpload(url: string, key: string, fileName: string, size: number, source: Readable): Promise<ApiResponse> {
  const headers = { authorization: `Bearer ${key}`, 'tus-resumable': '1.0.0' };
  const created = await fetch(`${url}/v1/uploads`, {
    method: 'POST',
    headers: { ...headers, 'upload-length': String(size), 'upload-metadata': `filename ${Buffer.from(fileName).toString('base64')}` },
  });
  if (created.status !== 201) throw new Error(`tus creation failed: ${created.status} ${await created.text()}`);
  const location = new URL(created.headers.get('location')!, url);
  return new Promise((resolve, reject) => {
    const request = http.request(location, {
      method: 'PATCH',
      headers: { ...headers, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': String(size) },
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: new Headers(), body: text ? JSON.parse(text) : null });
      });
    });
    request.on('error', reject);
    source.pipe(request);
  });
}

const work = testOutputDir('bench-upload');
rmSync(work, { recursive: true, force: true });

// Exactly what `npm start` runs: bin/signet (its V8 flags, its glibc settings, its compile cache) with `serve`.
const signet = await start(
  [...productionNodeFlags(), 'bin/signet', 'serve'],
  { ...productionEnv(), SIGNET_DATA_DIR: path.join(work, 'signet'), SIGNET_PORT: '0', SIGNET_HOST: '127.0.0.1', SIGNET_WORKER_CONCURRENCY: '0' },
  (line) => (line.includes('"signet listening"') ? (JSON.parse(line) as { url: string }).url : null),
);
// An API key made as an operator makes one (`signet keys create`), on the server's data dir.
const key = execFileSync(process.execPath, ['bin/signet', 'keys', 'create', '--account', 'bench'], {
  cwd: repoRoot,
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_DATA_DIR: path.join(work, 'signet') },
  encoding: 'utf8',
}).trim();
if (!key.startsWith('sk_')) throw new Error('no API key');
const bare = await start(['bench/bare-upload-server.ts', path.join(work, 'bare')], {}, (line) => (line.startsWith('BARE_URL ') ? line.slice(9) : null));

const apk = streamedApk(SIZE, { packageName: 'com.bench.upload' });
type Target = 'bare' | 'multipart' | 'tus';
// `--only=tus` (or multipart, bare) runs one path, e.g. to see its own peak RSS.
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const TARGETS: readonly Target[] = (['bare', 'multipart', 'tus'] as const).filter((t) => only === undefined || t === only);
const results: Record<Target, number[]> = { bare: [], multipart: [], tus: [] };
const cpu: Record<Target, number[]> = { bare: [], multipart: [], tus: [] };
try {
  for (let round = 1; round <= rounds; round += 1) {
    for (const target of TARGETS) {
      const server = target === 'bare' ? bare.child : signet.child;
      const cpuBefore = cpuSeconds(server);
      const started = performance.now();
      const response =
        target === 'bare' ? await streamUpload(bare.url, key, 'bench.apk', SIZE, apk.stream())
        : target === 'multipart' ? await streamUpload(signet.url, key, 'bench.apk', SIZE, apk.stream())
        : await tusUpload(signet.url, key, 'bench.apk', SIZE, apk.stream());
      const seconds = (performance.now() - started) / 1000;
      const size = target === 'bare' ? response.body?.size : response.body?.data?.size;
      if (response.status !== 200 || size !== SIZE) throw new Error(`${target} upload failed: ${response.status} ${JSON.stringify(response.body)}`);
      results[target].push(SIZE / MiB / seconds);
      cpu[target].push(cpuSeconds(server) - cpuBefore);
      console.log(`round ${round} ${target.padEnd(9)} ${(SIZE / MiB / seconds).toFixed(0).padStart(5)} MiB/s  (${seconds.toFixed(1)} s, server CPU ${cpu[target].at(-1)!.toFixed(1)} s)`);
      // Keep the disk from filling up across rounds.
      if (target !== 'bare') rmSync(path.join(work, 'signet', 'blobs', 'uploads'), { recursive: true, force: true });
    }
  }
} finally {
  const signetPeak = peakRss(signet.child);
  const barePeak = peakRss(bare.child);
  signet.child.kill('SIGTERM');
  bare.child.kill('SIGTERM');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const b = median(results.bare);
  const m = median(results.multipart);
  const t = median(results.tus);
  const ratio = (x: number, y: number) => (y > 0 ? (x / y).toFixed(2) : 'n/a');
  console.log('');
  console.log(`upload of ${SIZE} bytes (${(SIZE / MiB).toFixed(0)} MiB), median of ${rounds} round(s); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`  bare node:http + busboy   ${b.toFixed(0).padStart(5)} MiB/s   peak RSS ${(barePeak / MiB).toFixed(0)} MiB`);
  console.log(`  signet multipart          ${m.toFixed(0).padStart(5)} MiB/s`);
  console.log(`  signet tus (resumable)    ${t.toFixed(0).padStart(5)} MiB/s   (received, then stored and inspected like multipart)`);
  console.log(`  signet peak RSS ${(signetPeak / MiB).toFixed(0)} MiB (${(signetPeak / 1e6).toFixed(0)} MB; target <= 150 MB)`);
  console.log(`  throughput ratio multipart/bare: ${ratio(m, b)}   (target >= 0.9)`);
  console.log(`  throughput ratio tus/multipart:  ${ratio(t, m)}   (target >= 0.9)`);
  const [cb, cm, ct] = [median(cpu.bare), median(cpu.multipart), median(cpu.tus)];
  console.log(`  server CPU per upload: bare ${cb.toFixed(1)} s, multipart ${cm.toFixed(1)} s, tus ${ct.toFixed(1)} s`);
  rmSync(work, { recursive: true, force: true });
}
