// `npm run bench:upload`: a 2 GiB upload through Signet (`signet serve`, started exactly as
// `npm start` starts it) and through a bare node:http + busboy pipe-to-disk server, in the same
// run, alternating. Prints both throughputs, their ratio, and each server's peak RSS (VmHWM).
// Targets: ratio >= 0.9, Signet peak RSS <= 150 MB.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { streamUpload } from '../test/support/api-client.ts';
import { streamedApk } from '../test/support/app-packages.ts';
import { repoRoot, testOutputDir } from '../test/support/fixtures.ts';
import { productionNodeFlags } from '../test/support/server.ts';

const SIZE = 2 * 1024 ** 3;
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

const work = testOutputDir('bench-upload');
rmSync(work, { recursive: true, force: true });

// Exactly what `npm start` runs: bin/signet (its V8 flags, its compile cache) with `serve`.
const signet = await start(
  [...productionNodeFlags(), 'bin/signet', 'serve'],
  { SIGNET_DATA_DIR: path.join(work, 'signet'), SIGNET_PORT: '0', SIGNET_HOST: '127.0.0.1', SIGNET_WORKER_CONCURRENCY: '0' },
  (line) => (line.includes('"signet listening"') ? (JSON.parse(line) as { url: string }).url : null),
);
// Not a terminal: the first-start key is in a 0600 file of the data dir (src/main/first-start-key.ts).
const key = readFileSync(path.join(work, 'signet', 'first-start-api-key.txt'), 'utf8').trim();
if (!key) throw new Error('no first-start key');
const bare = await start(['bench/bare-upload-server.ts', path.join(work, 'bare')], {}, (line) => (line.startsWith('BARE_URL ') ? line.slice(9) : null));

const apk = streamedApk(SIZE, { packageName: 'com.bench.upload' });
const results: Record<'signet' | 'bare', number[]> = { signet: [], bare: [] };
const cpu: Record<'signet' | 'bare', number[]> = { signet: [], bare: [] };
try {
  for (let round = 1; round <= rounds; round += 1) {
    for (const target of ['bare', 'signet'] as const) {
      const server = target === 'signet' ? signet.child : bare.child;
      const cpuBefore = cpuSeconds(server);
      const started = performance.now();
      const response = await streamUpload(target === 'signet' ? signet.url : bare.url, key, 'bench.apk', SIZE, apk.stream());
      const seconds = (performance.now() - started) / 1000;
      const size = target === 'signet' ? response.body?.data?.size : response.body?.size;
      if (response.status !== 200 || size !== SIZE) throw new Error(`${target} upload failed: ${response.status} ${JSON.stringify(response.body)}`);
      results[target].push(SIZE / MiB / seconds);
      cpu[target].push(cpuSeconds(server) - cpuBefore);
      console.log(`round ${round} ${target.padEnd(6)} ${(SIZE / MiB / seconds).toFixed(0).padStart(5)} MiB/s  (${seconds.toFixed(1)} s, server CPU ${cpu[target].at(-1)!.toFixed(1)} s)`);
      if (target === 'signet') {
        // Keep the disk from filling up across rounds.
        rmSync(path.join(work, 'signet', 'blobs', 'uploads'), { recursive: true, force: true });
      }
    }
  }
} finally {
  const signetPeak = peakRss(signet.child);
  const barePeak = peakRss(bare.child);
  signet.child.kill('SIGTERM');
  bare.child.kill('SIGTERM');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const s = median(results.signet);
  const b = median(results.bare);
  console.log('');
  console.log(`upload of ${SIZE} bytes (2 GiB), median of ${rounds} round(s); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`  bare node:http + busboy   ${b.toFixed(0).padStart(5)} MiB/s   peak RSS ${(barePeak / MiB).toFixed(0)} MiB`);
  console.log(`  signet                    ${s.toFixed(0).padStart(5)} MiB/s   peak RSS ${(signetPeak / MiB).toFixed(0)} MiB   (${(signetPeak / 1e6).toFixed(0)} MB)`);
  console.log(`  throughput ratio signet/bare: ${b > 0 ? (s / b).toFixed(2) : 'n/a'}   (target >= 0.9)`);
  const cs = median(cpu.signet);
  const cb = median(cpu.bare);
  console.log(`  server CPU per upload: signet ${cs.toFixed(1)} s, bare ${cb.toFixed(1)} s (CPU-efficiency ratio bare/signet ${cs > 0 ? (cb / cs).toFixed(2) : 'n/a'})`);
  console.log(`  signet peak RSS ${(signetPeak / 1e6).toFixed(0)} MB   (target <= 150 MB)`);
  rmSync(work, { recursive: true, force: true });
}
