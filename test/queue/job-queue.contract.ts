// The JobQueue contract, run unchanged against the table queue (SQLite and PostgreSQL) and
// graphile-worker. Crash recovery is tested with a real child process killed with SIGKILL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/database.ts';
import { type ExhaustedJob, type JobContext, JobLeaseLostError, type JobQueue, JobReleasedError, type Worker } from '../../src/queue/job-queue.ts';
import { openQueueAt, type QueueLocation, stealLease } from './queue-backends.ts';

export interface QueueBackend {
  name: string;
  /** Creates the database the queue lives in; called once per suite. */
  prepare(): Promise<QueueLocation>;
  cleanup(): Promise<void>;
}

// Long enough that a loaded CI machine never loses a lease by mere slowness (which would re-run
// jobs and fail the exactly-once checks), short enough for the crash tests to wait out.
const LEASE_MS = 2000;
const POLL_MS = 50;
const CRASH_WORKER = fileURLToPath(new URL('./crash-worker.ts', import.meta.url));

const uid = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts crash-worker.ts, waits until it has claimed a job, then kills it with SIGKILL. */
async function crashWhileRunning(location: QueueLocation): Promise<{ taskId: string; attempt: number }> {
  const child = spawn(process.execPath, [CRASH_WORKER, JSON.stringify({ location, leaseMs: LEASE_MS })], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const match = /^claimed (\S+) (\d+)$/.exec(line);
      if (match) return { taskId: match[1]!, attempt: Number(match[2]) };
    }
    throw new Error('crash worker exited without claiming a job');
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

export function describeJobQueueContract(backend: QueueBackend): void {
  describe(`JobQueue on ${backend.name}`, () => {
    let location: QueueLocation;
    let db: Db;
    let queue: JobQueue;
    const workers: Worker[] = [];
    const start = (...args: Parameters<JobQueue['start']>) => {
      const worker = queue.start(...args);
      workers.push(worker);
      return worker;
    };

    before(async () => {
      location = await backend.prepare();
      ({ db, queue } = await openQueueAt(location, { leaseMs: LEASE_MS, pollIntervalMs: POLL_MS }));
    });
    after(async () => {
      await Promise.all(workers.map((worker) => worker.stop()));
      await queue?.close();
      await db?.close();
      await backend.cleanup();
    });

    test('a job runs once with its payload, attempt 1 and the default of 3 attempts', async () => {
      const taskId = uid('once');
      const runs: { taskId: string; context: JobContext }[] = [];
      const worker = start({ concurrency: 1, handlers: { sign_task: async (payload, context) => void runs.push({ taskId: payload.taskId, context }) } });
      const jobId = await queue.enqueue('sign_task', { taskId });
      await until(() => runs.some((r) => r.taskId === taskId), 5000, 'the job');
      await new Promise((resolve) => setTimeout(resolve, 4 * POLL_MS));
      await worker.stop();
      const mine = runs.filter((r) => r.taskId === taskId);
      assert.equal(mine.length, 1);
      assert.deepEqual([mine[0]!.context.jobId, mine[0]!.context.kind, mine[0]!.context.attempt, mine[0]!.context.maxAttempts], [jobId, 'sign_task', 1, 3]);
      await assert.rejects(queue.enqueue('sign_task', { taskId }, { maxAttempts: 0 }), RangeError);
      await assert.rejects(queue.enqueue('sign_task', { taskId }, { runAt: new Date(Number.NaN) }), RangeError);
    });

    test('concurrent workers run every job exactly once and respect their concurrency', async () => {
      const ids = Array.from({ length: 30 }, (_, i) => uid(`many${i}`));
      const wanted = new Set(ids);
      const count = new Map<string, number>();
      let inFlight = 0;
      let peak = 0;
      const handler = async (payload: { taskId: string }) => {
        if (!wanted.has(payload.taskId)) return;
        inFlight++;
        peak = Math.max(peak, inFlight);
        count.set(payload.taskId, (count.get(payload.taskId) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
      };
      const group = [1, 2, 3].map(() => start({ concurrency: 2, handlers: { sign_task: handler } }));
      for (const taskId of ids) await queue.enqueue('sign_task', { taskId });
      await until(() => count.size === ids.length, 15_000, 'all jobs');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await Promise.all(group.map((worker) => worker.stop()));
      assert.deepEqual([...count.values()].filter((n) => n !== 1), [], 'no job ran twice');
      assert.ok(peak <= 6, `peak concurrency ${peak} exceeds 3 workers × 2`);
    });

    test('a failing job is retried after a backoff and then succeeds', async () => {
      const taskId = uid('retry');
      const attempts: number[] = [];
      const worker = start({
        concurrency: 1,
        handlers: {
          sign_task: async (payload, context) => {
            if (payload.taskId !== taskId) return;
            attempts.push(context.attempt);
            if (context.attempt === 1) throw new Error('transient');
          },
        },
      });
      const started = Date.now();
      await queue.enqueue('sign_task', { taskId });
      await until(() => attempts.length === 2, 10_000, 'the retry');
      assert.ok(Date.now() - started >= 1000, 'the retry waited for its backoff');
      await worker.stop();
      assert.deepEqual(attempts, [1, 2]);
    });

    test('a job failing every attempt is given up once, with its last error', async () => {
      const taskId = uid('exhaust');
      let runs = 0;
      const exhausted: ExhaustedJob[] = [];
      const worker = start({
        concurrency: 1,
        handlers: {
          sign_task: async (payload) => {
            if (payload.taskId !== taskId) return;
            runs++;
            throw new Error(`failure ${runs}`);
          },
        },
        onExhausted: async (job) => void exhausted.push(job),
      });
      await queue.enqueue('sign_task', { taskId }, { maxAttempts: 2 });
      await until(() => exhausted.length === 1, 10_000, 'exhaustion');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await worker.stop();
      assert.equal(runs, 2);
      assert.equal(exhausted.length, 1);
      assert.deepEqual([exhausted[0]!.kind, exhausted[0]!.payload, exhausted[0]!.attempts, exhausted[0]!.lastError], ['sign_task', { taskId }, 2, 'failure 2']);
    });

    test('stopping a worker hands running jobs back without consuming an attempt', async () => {
      const taskId = uid('release');
      const seen: { attempt: number; reason: unknown }[] = [];
      let running = false;
      const first = start({
        concurrency: 1,
        handlers: {
          sign_task: async (payload, context) => {
            if (payload.taskId !== taskId) return;
            running = true;
            await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
            seen.push({ attempt: context.attempt, reason: context.signal.reason });
            throw context.signal.reason;
          },
        },
      });
      await queue.enqueue('sign_task', { taskId });
      await until(() => running, 5000, 'the job to start');
      await first.stop();
      assert.equal(seen.length, 1, 'the handler saw the abort');
      assert.ok(seen[0]!.reason instanceof JobReleasedError);
      const attempts: number[] = [];
      const second = start({ concurrency: 1, handlers: { sign_task: async (payload, context) => void (payload.taskId === taskId && attempts.push(context.attempt)) } });
      await until(() => attempts.length === 1, 5000, 'the handed-back job');
      await second.stop();
      assert.deepEqual(attempts, [1], 'the released run did not count');
    });

    test('a run whose lease is taken away is aborted, cannot complete the job, and the job runs again', async () => {
      const taskId = uid('stolen');
      const runs: { attempt: number; jobId: string }[] = [];
      let abortReason: unknown;
      const worker = start({
        concurrency: 1,
        handlers: {
          sign_task: async (payload, context) => {
            if (payload.taskId !== taskId) return;
            runs.push({ attempt: context.attempt, jobId: context.jobId });
            if (context.attempt > 1) return;
            await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
            abortReason = context.signal.reason;
            // Returning normally must not complete a job this run no longer owns.
          },
        },
      });
      await queue.enqueue('sign_task', { taskId });
      await until(() => runs.length === 1, 5000, 'the first run');
      await stealLease(location, db, runs[0]!.jobId);
      await until(() => abortReason !== undefined, 5000, 'the abort');
      assert.ok(abortReason instanceof JobLeaseLostError);
      await until(() => runs.length === 2, 10_000, 'the second run');
      await worker.stop();
      assert.deepEqual(runs.map((r) => r.attempt), [1, 2]);
    });

    test('a worker killed with SIGKILL mid-job loses nothing: the job runs again after its lease expires', async () => {
      const taskId = uid('crash');
      const reruns: number[] = [];
      await queue.enqueue('sign_task', { taskId });
      const crashed = await crashWhileRunning(location);
      assert.deepEqual(crashed, { taskId, attempt: 1 });
      const worker = start({ concurrency: 1, handlers: { sign_task: async (payload, context) => void (payload.taskId === taskId && reruns.push(context.attempt)) } });
      await until(() => reruns.length === 1, 10_000, 'the re-run');
      await worker.stop();
      assert.deepEqual(reruns, [2], 'the lost run counted as an attempt');
    });

    test('a job whose last attempt dies with its worker is given up as "lease expired"', async () => {
      const taskId = uid('crash-last');
      const exhausted: ExhaustedJob[] = [];
      let reran = false;
      await queue.enqueue('sign_task', { taskId }, { maxAttempts: 1 });
      await crashWhileRunning(location);
      const worker = start({
        concurrency: 1,
        handlers: { sign_task: async (payload) => void (payload.taskId === taskId && (reran = true)) },
        onExhausted: async (job) => void exhausted.push(job),
      });
      await until(() => exhausted.length === 1, 10_000, 'exhaustion');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await worker.stop();
      assert.equal(reran, false);
      assert.deepEqual([exhausted[0]!.payload, exhausted[0]!.attempts, exhausted[0]!.lastError], [{ taskId }, 1, 'lease expired']);
    });

    test('runAt delays a job; a job key replaces the queued job instead of adding one', async () => {
      const key = uid('key');
      const seen: { taskId: string; at: number }[] = [];
      const worker = start({ concurrency: 1, handlers: { deliver_webhook: async (payload) => void seen.push({ taskId: payload.taskId, at: Date.now() }) } });
      const runAt = new Date(Date.now() + 700);
      await queue.enqueue('deliver_webhook', { taskId: `${key}-a`, event: 'task.succeeded' }, { runAt, jobKey: key });
      await queue.enqueue('deliver_webhook', { taskId: `${key}-b`, event: 'task.succeeded' }, { runAt, jobKey: key });
      await until(() => seen.some((s) => s.taskId.startsWith(key)), 5000, 'the keyed job');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await worker.stop();
      const mine = seen.filter((s) => s.taskId.startsWith(key));
      assert.deepEqual(mine.map((s) => s.taskId), [`${key}-b`]);
      assert.ok(mine[0]!.at >= runAt.getTime() - 50, 'ran no earlier than runAt');
    });

    test('a job enqueued in a rolled-back transaction never runs', async () => {
      const taskId = uid('rollback');
      const committed = uid('commit');
      const seen: string[] = [];
      const worker = start({ concurrency: 1, handlers: { sign_task: async (payload) => void seen.push(payload.taskId) } });
      await assert.rejects(
        db.transaction(async (tx) => {
          await queue.enqueue('sign_task', { taskId }, { transaction: tx.kysely });
          throw new Error('roll back');
        }),
        /roll back/,
      );
      await db.transaction((tx) => queue.enqueue('sign_task', { taskId: committed }, { transaction: tx.kysely }));
      await until(() => seen.includes(committed), 5000, 'the committed job');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await worker.stop();
      assert.ok(!seen.includes(taskId));
    });
  });
}
