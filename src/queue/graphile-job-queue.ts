// The scale-out job queue: graphile-worker on PostgreSQL (LISTEN/NOTIFY pickup in milliseconds,
// SKIP LOCKED claiming, exponential retry backoff). Only its public API is used: `run`,
// `runMigrations` and the documented SQL functions (add_job, complete_jobs, reschedule_jobs,
// force_unlock_workers) plus the `jobs` view.
//
// What graphile-worker lacks is short leases: a crashed worker's jobs stay locked for 4 hours
// (hard-coded). So each worker pool heartbeats the jobs it runs in `signet_job_leases`; a pool
// whose leases expire is dead (kill -9), and any other pool's sweep unlocks its jobs (the lost run
// has used its attempt: graphile counts attempts at claim time) or gives up on them when no
// attempts are left.
import { type JobHelpers, Logger, run, runMigrations, type Runner, type TaskList } from 'graphile-worker';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import type { EnqueueOptions, JobContext, JobKind, JobPayloads, JobQueue, QueueTuning, Worker, WorkerOptions } from './job-queue.ts';
import { assertEnqueueOptions, DEFAULT_MAX_ATTEMPTS, JOB_KINDS, JobLeaseLostError, JobReleasedError, WorkerSet, workerCallbacks } from './job-queue.ts';

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_POLL_MS = 1_000;
const RELEASE_TIMEOUT_MS = 10_000;

// Created here rather than by Signet's migrations because it belongs to this adapter, next to the
// graphile_worker schema that graphile-worker migrates itself.
const LEASES_DDL = `
create table if not exists signet_job_leases (
  job_id bigint primary key,
  pool_id text not null,
  locked_until timestamptz not null,
  kind text not null,
  payload jsonb not null
);
create index if not exists signet_job_leases_expiry on signet_job_leases (locked_until);`;

// job_key_mode 'replace': a queued job with the key is updated in place; a running one keeps
// running and a new job is added (the table queue behaves the same).
const ADD_JOB_SQL = `
select (graphile_worker.add_job(
  $1, $2::json, run_at := $3::timestamptz, max_attempts := $4::smallint, job_key := $5::text, job_key_mode := 'replace'
)).id::text as id`;

export interface GraphileJobQueueOptions extends QueueTuning {
  connectionString: string;
}

export class GraphileJobQueue implements JobQueue {
  readonly kind = 'graphile';
  readonly #pool: pg.Pool;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #workers = new WorkerSet();

  private constructor(pool: pg.Pool, tuning: QueueTuning) {
    this.#pool = pool;
    this.#leaseMs = tuning.leaseMs ?? DEFAULT_LEASE_MS;
    this.#pollIntervalMs = tuning.pollIntervalMs ?? DEFAULT_POLL_MS;
  }

  /** Connects, and migrates graphile-worker's schema and the lease table. */
  static async open(options: GraphileJobQueueOptions): Promise<GraphileJobQueue> {
    const pool = new pg.Pool({ connectionString: options.connectionString, max: 10 });
    // A client losing its connection must not crash the process (an unhandled 'error' event):
    // pg drops an idle client from the pool and raises the error on a checked-out client's next
    // query, where the heartbeat, sweep or claim reports it.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    try {
      await runMigrations({ pgPool: pool, logger: quietLogger(() => undefined) });
      await pool.query(LEASES_DDL);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new GraphileJobQueue(pool, options);
  }

  async enqueue<K extends JobKind>(kind: K, payload: JobPayloads[K], options: EnqueueOptions = {}): Promise<string> {
    assertEnqueueOptions(options);
    const parameters = [
      kind,
      JSON.stringify(payload),
      options.runAt ?? null,
      options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      options.jobKey ?? null,
    ];
    const { rows } =
      options.transaction === undefined
        ? await this.#pool.query<{ id: string }>(ADD_JOB_SQL, parameters)
        : await options.transaction.executeQuery<{ id: string }>(CompiledQuery.raw(ADD_JOB_SQL, parameters));
    const id = rows[0]?.id;
    if (id === undefined) throw new Error('graphile_worker.add_job returned no job');
    return id;
  }

  start(options: WorkerOptions): Worker {
    return this.#workers.add(startGraphileWorker(this.#pool, options, { leaseMs: this.#leaseMs, pollIntervalMs: this.#pollIntervalMs }));
  }

  async close(): Promise<void> {
    await this.#workers.stopAll();
    await this.#pool.end();
  }
}

interface Running {
  jobId: string;
  attempts: number;
  controller: AbortController;
  /** Set once the lease row exists; before that a missing row proves nothing. */
  started: boolean;
}

function startGraphileWorker(pool: pg.Pool, options: WorkerOptions, tuning: Required<QueueTuning>): Worker {
  const { reportError, giveUp } = workerCallbacks(options);
  const running = new Map<string, Running>();
  const released: Running[] = [];
  let poolId: string | null = null;
  let stopping = false;

  const wrap = (kind: JobKind) => async (payload: unknown, helpers: JobHelpers): Promise<void> => {
    const { job } = helpers;
    poolId ??= job.locked_by;
    const entry: Running = { jobId: job.id, attempts: job.attempts, controller: new AbortController(), started: false };
    // A job picked up while stopping goes straight back.
    if (stopping) entry.controller.abort(new JobReleasedError());
    running.set(job.id, entry);
    const context: JobContext = {
      jobId: job.id,
      kind,
      attempt: job.attempts,
      maxAttempts: job.max_attempts,
      signal: entry.controller.signal,
    };
    try {
      await pool.query(
        `insert into signet_job_leases (job_id, pool_id, locked_until, kind, payload)
         values ($1, $2, now() + $3 * interval '1 millisecond', $4, $5::jsonb)
         on conflict (job_id) do update set pool_id = excluded.pool_id, locked_until = excluded.locked_until`,
        [job.id, job.locked_by, tuning.leaseMs, kind, JSON.stringify(payload ?? null)],
      );
      entry.started = true;
      if (stopping) throw new JobReleasedError();
      const handler = options.handlers[kind] as (payload: unknown, context: JobContext) => Promise<void>;
      await handler(payload, context);
      // Returning would complete (delete) the job, and graphile's completion is not fenced by
      // lock owner: it could delete the run that took over. Failing is fenced, so fail instead.
      if (entry.controller.signal.reason instanceof JobLeaseLostError) throw entry.controller.signal.reason;
    } catch (error) {
      const reason: unknown = entry.controller.signal.reason;
      if (reason instanceof JobReleasedError) released.push(entry);
      // Throwing lets graphile-worker record the failure and schedule the retry (e^attempts s).
      if (reason !== undefined) throw error;
      if (job.attempts < job.max_attempts) throw error;
      const message = error instanceof Error ? error.message : String(error);
      await giveUp({ jobId: job.id, kind, payload: payload as JobPayloads[JobKind], attempts: job.attempts, lastError: message });
      // Returning normally: graphile deletes the job instead of keeping a permanently failed row.
    } finally {
      running.delete(job.id);
      await pool.query('delete from signet_job_leases where job_id = $1 and pool_id = $2', [job.id, job.locked_by]).catch(reportError);
    }
  };

  const taskList: TaskList = {};
  for (const kind of JOB_KINDS) if (options.handlers[kind] !== undefined) taskList[kind] = wrap(kind);

  // One statement renews every lease of this pool; a job missing from the result was swept.
  const heartbeat = async (): Promise<void> => {
    if (poolId === null || running.size === 0) return;
    const { rows } = await pool.query<{ job_id: string }>(
      `update signet_job_leases set locked_until = now() + $2 * interval '1 millisecond' where pool_id = $1 returning job_id::text`,
      [poolId, tuning.leaseMs],
    );
    const held = new Set(rows.map((row) => row.job_id));
    for (const entry of running.values()) {
      if (!held.has(entry.jobId) && !entry.controller.signal.aborted && entry.started) entry.controller.abort(new JobLeaseLostError());
    }
  };

  // Expired leases are acted on first and deleted last, so a sweeper dying midway leaves them for
  // the next sweep. Two sweepers may both act on one lease; every step is idempotent (unlocking,
  // completing, and onExhausted, whose task write is a compare-and-set).
  const sweep = async (): Promise<void> => {
    const { rows: expired } = await pool.query<{ job_id: string; pool_id: string; kind: JobKind; payload: JobPayloads[JobKind] }>(
      'select job_id::text, pool_id, kind, payload from signet_job_leases where locked_until < now() order by locked_until limit 100',
    );
    if (expired.length === 0) return;
    const { rows: jobs } = await pool.query<{ id: string; attempts: number; max_attempts: number; locked_by: string | null }>(
      'select id::text, attempts, max_attempts, locked_by from graphile_worker.jobs where id = any($1::bigint[])',
      [expired.map((row) => row.job_id)],
    );
    const deadPools = new Set<string>();
    for (const lease of expired) {
      const job = jobs.find((row) => row.id === lease.job_id);
      if (job === undefined || job.locked_by !== lease.pool_id) continue; // finished or re-claimed meanwhile
      if (job.attempts >= job.max_attempts) {
        await giveUp({ jobId: job.id, kind: lease.kind, payload: lease.payload, attempts: job.attempts, lastError: 'lease expired' });
        await pool.query('select graphile_worker.complete_jobs(array[$1::bigint])', [job.id]);
      } else {
        deadPools.add(lease.pool_id);
      }
    }
    // Unlocks every job of each dead pool; attempts were counted when the lost runs claimed them.
    if (deadPools.size > 0) await pool.query('select graphile_worker.force_unlock_workers($1::text[])', [[...deadPools]]);
    // Only the expired rows: a job re-claimed meanwhile has a fresh row under its new pool.
    await pool.query(
      `delete from signet_job_leases l using unnest($1::bigint[], $2::text[]) as e(job_id, pool_id)
       where l.job_id = e.job_id and l.pool_id = e.pool_id and l.locked_until < now()`,
      [expired.map((row) => row.job_id), expired.map((row) => row.pool_id)],
    );
  };

  // A slow round (a stalled connection) must not overlap the next one.
  const everyMs = (ms: number, task: () => Promise<void>) => {
    let busy = false;
    return setInterval(() => {
      if (busy) return;
      busy = true;
      task()
        .catch(reportError)
        .finally(() => (busy = false));
    }, ms);
  };
  const timers = [everyMs(Math.max(10, Math.floor(tuning.leaseMs / 3)), heartbeat), everyMs(tuning.pollIntervalMs, sweep)];

  const runner: Promise<Runner> = run({
    pgPool: pool,
    concurrency: options.concurrency,
    noHandleSignals: true,
    pollInterval: tuning.pollIntervalMs,
    taskList,
    logger: quietLogger(reportError),
  });
  runner.catch(reportError);

  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        stopping = true;
        for (const entry of running.values()) entry.controller.abort(new JobReleasedError());
        for (const timer of timers) clearInterval(timer);
        await (await runner).stop();
        // graphile-worker records the released runs as failures (attempt counted, e^n s backoff)
        // in a fire-and-forget write that may land after stop() resolves; reschedule_jobs only
        // touches unlocked jobs, so retry until that write is in. The backoff keeps other pools
        // away meanwhile. Then the attempt is given back and the job is due now.
        for (const entry of released) {
          const deadline = Date.now() + RELEASE_TIMEOUT_MS;
          for (;;) {
            const { rowCount } = await pool.query(
              'select 1 from graphile_worker.reschedule_jobs(array[$1::bigint], run_at := now(), attempts := $2::int)',
              [entry.jobId, entry.attempts - 1],
            );
            if (rowCount !== 0) break;
            if (Date.now() > deadline) {
              reportError(new Error(`job ${entry.jobId} was not unlocked after shutdown; it keeps graphile-worker's retry schedule`));
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      })();
      return stopped;
    },
  };
}

/** graphile-worker's logger, reduced to errors that no handler sees (job failures are ours). */
function quietLogger(report: (error: unknown) => void): Logger {
  return new Logger(() => (level, message, meta) => {
    if (level === 'error' && meta?.failure !== true) report(new Error(`graphile-worker: ${message}`));
  });
}
