// The service path of issue #16, shared by bench/ipa.ts and bench/apk.ts: what a CI pipeline
// waits for when it hands a package to a running Signet — upload (POST /v1/apps/upload,
// multipart), task creation (POST /v1/tasks/create, enterprise) and the task's signing, up to the
// moment GET /v1/tasks/{id} says `succeeded`.
//
// The server is a real `bin/signet serve` child, started as users start it (the executable
// itself, so its shebang's Node flags and malloc settings apply), on a fresh data dir in the
// system's temporary directory and a port the kernel picks (SIGNET_PORT=0, read back from the
// "signet listening" log line). The API key is made as an operator makes one
// (`signet keys create`), and the certificate is uploaded through POST /v1/certificates, as a
// user does. It is killed, and its data dir removed, on close, on the bench's exit (even a failed
// one) and on SIGINT/SIGTERM.
//
// Per run: wall time from the first byte of the upload to the poll that sees `succeeded`, and the
// server's CPU time over that interval (utime + stime of /proc/PID/stat, which cover all of its
// threads: the HTTP loop, the piscina signer and Mach-O threads, libuv's pool; plus any child
// processes, live or reaped, so that a signer moved out of process would still be counted).
// The peak RSS is VmHWM: the server's peak over its whole life up to that run, not the run's own.
// Uploads and signed packages stay in the data dir until the bench ends: about twice the
// package's size per run on the temporary directory's disk.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { streamUpload } from '../test/support/api-client.ts';
import { flushWrites } from './flush-writes.ts';

const exec = promisify(execFile);
/** How often the task is polled: the wall figure is late by at most this (the SSE stream polls at 500 ms). */
const POLL_MS = 100;
/** USER_HZ: the unit of /proc/PID/stat's CPU times. */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export interface ServiceMeasure {
  ms: number;
  /** Server CPU (all threads and children) between the upload's start and `succeeded`, ms. */
  cpuMs: number;
  /** The server's VmHWM after the run: its peak since it started, bytes. */
  peakRss: number;
}

export interface ServicePath {
  /** Uploads `file`, signs it with an enterprise task, waits for `succeeded`. */
  run(file: string): Promise<ServiceMeasure>;
  /** Downloads the signed package of the last run (GET /v1/tasks/{id}/artifact) to `file`. */
  download(file: string): Promise<void>;
  /** VmHWM once started with its certificate, before any run: what the runs' peak is over. */
  readonly idleRss: number;
  close(): Promise<void>;
}

/** A part of the certificate form: a text field or a file. */
export type FormValue = string | { name: string; data: Buffer };

/**
 * Starts `bin/signet serve` and registers the certificate described by `certificate` (the fields
 * of POST /v1/certificates). `env` is the bench's environment (PATH with this Node first, and
 * its compile cache).
 */
export async function startServicePath(repoRoot: string, env: NodeJS.ProcessEnv, certificate: Record<string, FormValue>): Promise<ServicePath> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signet-bench-serve-'));
  // Only the bench configures this server (defaults otherwise: SQLite, disk storage, 2 workers),
  // whatever SIGNET_* the shell running the bench holds.
  const inherited = Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('SIGNET_')));
  const serverEnv = { ...inherited, SIGNET_DATA_DIR: dataDir, SIGNET_PORT: '0', SIGNET_HOST: '127.0.0.1', SIGNET_LOG_LEVEL: 'info' };
  const bin = path.join(repoRoot, 'bin', 'signet');
  const child = spawn(bin, ['serve'], { cwd: repoRoot, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  // Synchronous, so that it also runs from process.on('exit').
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    kill();
    process.kill(process.pid, signal);
  };
  process.once('exit', kill);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const detach = (): void => {
    process.off('exit', kill);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  // The log is read to the end (a full pipe would stall the server); the tail explains a failure.
  const tail: string[] = [];
  const keep = (line: string): void => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
  };
  createInterface({ input: child.stderr! }).on('line', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        keep(line);
        if (line.includes('"signet listening"')) resolve((JSON.parse(line) as { url: string }).url);
      });
      child.once('error', reject);
      void exited.then(() => reject(new Error(`signet serve exited before listening:\n${tail.join('\n')}`)));
    });
    const key = (await exec(bin, ['keys', 'create', '--account', 'bench', '--label', 'bench'], { cwd: repoRoot, env: serverEnv })).stdout.trim();
    if (!key.startsWith('sk_')) throw new Error(`signet keys create printed no key: ${key}`);
    const authorization = `Bearer ${key}`;
    const form = new FormData();
    for (const [name, value] of Object.entries(certificate)) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, new Blob([new Uint8Array(value.data)]), value.name);
    }
    const certificateId = (await json(await fetch(`${url}/v1/certificates`, { method: 'POST', headers: { authorization }, body: form }), 'certificate upload')).id as string;

    const idleRss = peakRssOf(child.pid!);
    let lastTask: string | undefined;
    const measure = async (file: string): Promise<ServiceMeasure> => {
      flushWrites();
      const cpu0 = cpuTicks(child.pid!);
      const start = performance.now();
      const upload = await streamUpload(url, key, path.basename(file), statSync(file).size, createReadStream(file));
      if (upload.status !== 200) throw new Error(`upload failed: ${upload.status} ${JSON.stringify(upload.body)}`);
      const created = await json(
        await fetch(`${url}/v1/tasks/create`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ file_key: upload.body.data.file_key, cert_type: 'enterprise', certificate_id: certificateId }) }),
        'task creation',
      );
      for (;;) {
        const task = await json(await fetch(`${url}/v1/tasks/${created.task_id}`, { headers: { authorization } }), 'task poll');
        if (task.status === 'succeeded') {
          lastTask = task.task_id;
          break;
        }
        if (task.status === 'failed' || task.status === 'cancelled') throw new Error(`task ${task.task_id} ${task.status}: ${JSON.stringify(task.error)}`);
        await sleep(POLL_MS);
      }
      const ms = performance.now() - start;
      const cpuMs = ((cpuTicks(child.pid!) - cpu0) * 1000) / TICKS_PER_SECOND;
      const peakRss = peakRssOf(child.pid!);
      await settle(child.pid!);
      return { ms, cpuMs, peakRss };
    };
    // A server that died mid-run shows as a refused connection: its last words say why.
    const run = (file: string): Promise<ServiceMeasure> =>
      measure(file).catch(async (error: unknown) => {
        // The socket may close before the exit is reported.
        await Promise.race([exited, sleep(1000)]);
        if (child.exitCode === null && child.signalCode === null) throw error;
        throw new Error(`signet serve exited (${child.exitCode ?? child.signalCode}) during a run:\n${tail.join('\n')}`, { cause: error });
      });
    const download = async (file: string): Promise<void> => {
      const response = await fetch(`${url}/v1/tasks/${lastTask}/artifact`, { headers: { authorization } });
      if (!response.ok || response.body === null) throw new Error(`artifact download failed: ${response.status} ${await response.text()}`);
      await pipeline(response.body, createWriteStream(file));
    };
    const close = async (): Promise<void> => {
      detach();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        // Graceful stop first; a server that does not stop in 10 s is killed.
        await Promise.race([exited, sleep(10_000)]);
      }
      kill();
    };
    return { run, download, idleRss, close };
  } catch (error) {
    detach();
    kill();
    throw error;
  }
}

function peakRssOf(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

/** The `data` of a JSON answer, or an error naming the step and the server's answer. */
async function json(response: Response, step: string): Promise<any> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${step} failed: ${response.status} ${text}`);
  return (JSON.parse(text) as { data: any }).data;
}

/**
 * CPU ticks used so far by the process (all its threads) and by its descendants: utime + stime of
 * each live one, plus cutime + cstime (children that exited and were waited for).
 */
function cpuTicks(pid: number): number {
  let fields: string[];
  try {
    // Fields after the command name, which is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  } catch {
    return 0; // exited since its parent listed it: its time is in the parent's cutime once reaped
  }
  let ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  for (const child of childrenOf(pid)) ticks += cpuTicks(child);
  return ticks;
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/**
 * Waits (untimed) until the server is idle — under 2 % of a core over 250 ms, at most 10 s — so
 * that whatever it still does after `succeeded` does not load the next row's run.
 */
async function settle(pid: number): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    const before = cpuTicks(pid);
    await sleep(250);
    if (((cpuTicks(pid) - before) * 1000) / TICKS_PER_SECOND < 5) return;
  }
}
