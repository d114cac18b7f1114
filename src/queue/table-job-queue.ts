// The embedded job queue: a `jobs` table in Signet's own database (in-house: SQLite has no queue
// engine, and graphile-worker needs PostgreSQL). Claiming is one `UPDATE … WHERE id = (SELECT …
// LIMIT 1) RETURNING`, served by a partial index over queued rows only, so finished history never
// slows it down. SQLite's single writer makes the claim atomic; on PostgreSQL (where this queue
// also runs, e.g. in tests) the subselect adds FOR UPDATE SKIP LOCKED.
// Every write after the claim is fenced by the run's lease_token: once a sweep has re-queued a
// job, the old run's heartbeat, completion or failure matches no row and changes nothing.
import { randomBytes } from 'node:crypto';
import { type Kysely, type SqlBool, sql } from 'kysely';
import { DIALECT_FEATURES, type DialectName } from '../db/dialect.ts';
import { newId } from '../db/ids.ts';
import type { Database, JobRow } from '../db/schema.ts';
import { type ClaimedJob, type LeaseStore, runWorker } from './job-runner.ts';
import {
  assertEnqueueOptions,
  DEFAULT_MAX_ATTEMPTS,
  type EnqueueOptions,
  type ExhaustedJob,
  type JobKind,
  type JobPayloads,
  type JobQueue,
  type QueueTuning,
  type Worker,
  type WorkerOptions,
  WorkerSet,
} from './job-queue.ts';

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_POLL_MS = 1_000;
const PURGE_INTERVAL_MS = 3_600_000;
const FAILED_JOB_RETENTION_MS = 7 * 86_400_000;
/** Retry delay after the n-th failed attempt: 2^n s, at most an hour (graphile-worker uses e^n s). */
const retryDelayMs = (attempts: number): number => Math.min(2 ** attempts * 1000, 3_600_000);

const iso = (ms: number): string => new Date(ms).toISOString();

export class TableJobQueue implements JobQueue, LeaseStore {
  readonly kind = 'table';
  readonly #db: Kysely<Database>;
  readonly #skipLocked: boolean;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #workers = new WorkerSet();
  // Same-process enqueues wake idle workers at once; other processes are seen by polling.
  readonly #listeners = new Set<() => void>();
  #lastPurge = 0;

  constructor(db: Kysely<Database>, dialect: DialectName, tuning: QueueTuning = {}) {
    this.#db = db;
    this.#skipLocked = DIALECT_FEATURES[dialect].skipLocked;
    this.#leaseMs = tuning.leaseMs ?? DEFAULT_LEASE_MS;
    this.#pollIntervalMs = tuning.pollIntervalMs ?? DEFAULT_POLL_MS;
  }

  async enqueue<K extends JobKind>(kind: K, payload: JobPayloads[K], options: EnqueueOptions = {}): Promise<string> {
    assertEnqueueOptions(options);
    const now = Date.now();
    const values = {
      id: newId('job'),
      kind,
      payload_json: JSON.stringify(payload),
      state: 'queued' as const,
      job_key: options.jobKey ?? null,
      run_at: iso(options.runAt?.getTime() ?? now),
      attempts: 0,
      max_attempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      lease_token: null,
      locked_until: null,
      last_error: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
    const db = options.transaction ?? this.#db;
    const row = await db
      .insertInto('jobs')
      .values(values)
      // Conflicts only with a still-queued job of the same key (the unique index is partial).
      .onConflict((oc) =>
        oc
          .column('job_key')
          // Literal SQL: to infer a partial index the predicate must match the index's own
          // (0001-initial.ts), which a bound parameter does not.
          .where(sql<SqlBool>`state = 'queued' and job_key is not null`)
          .doUpdateSet({
            payload_json: values.payload_json,
            run_at: values.run_at,
            max_attempts: values.max_attempts,
            updated_at: values.updated_at,
          }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    // Inside a transaction the row is not visible until commit; the wake-up is then merely early
    // and the poll picks the job up.
    for (const listener of this.#listeners) listener();
    return row.id;
  }

  start(options: WorkerOptions): Worker {
    return this.#workers.add(
      runWorker(this, {
        ...options,
        leaseMs: this.#leaseMs,
        pollIntervalMs: this.#pollIntervalMs,
        subscribe: (listener) => {
          this.#listeners.add(listener);
          return () => this.#listeners.delete(listener);
        },
      }),
    );
  }

  async close(): Promise<void> {
    await this.#workers.stopAll();
  }

  // --- LeaseStore: the primitives runWorker drives ---

  async claim(kinds: readonly JobKind[]): Promise<ClaimedJob | null> {
    if (kinds.length === 0) return null;
    const now = Date.now();
    const token = randomBytes(12).toString('hex');
    const next = this.#db
      .selectFrom('jobs')
      .select('id')
      .where('state', '=', 'queued')
      .where('run_at', '<=', iso(now))
      .where('kind', 'in', kinds)
      .orderBy('run_at')
      .orderBy('id')
      .limit(1)
      .$if(this.#skipLocked, (qb) => qb.forUpdate().skipLocked());
    const row = await this.#db
      .updateTable('jobs')
      .set((eb) => ({
        state: 'running',
        attempts: eb('attempts', '+', 1),
        lease_token: token,
        locked_until: iso(now + this.#leaseMs),
        updated_at: iso(now),
      }))
      .where('id', '=', next)
      .where('state', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    return row === undefined ? null : toClaimed(row);
  }

  async heartbeat(job: ClaimedJob): Promise<boolean> {
    const now = Date.now();
    const result = await this.#db
      .updateTable('jobs')
      .set({ locked_until: iso(now + this.#leaseMs), updated_at: iso(now) })
      .where('id', '=', job.id)
      .where('lease_token', '=', job.leaseToken)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async complete(job: ClaimedJob): Promise<void> {
    await this.#db.deleteFrom('jobs').where('id', '=', job.id).where('lease_token', '=', job.leaseToken).execute();
  }

  async fail(job: ClaimedJob, error: string): Promise<'retrying' | 'exhausted' | 'lost'> {
    const now = Date.now();
    const exhausted = job.attempts >= job.maxAttempts;
    const result = await this.#db
      .updateTable('jobs')
      .set({
        state: exhausted ? 'failed' : 'queued',
        run_at: exhausted ? iso(now) : iso(now + retryDelayMs(job.attempts)),
        lease_token: null,
        locked_until: null,
        last_error: error.slice(0, 2000),
        updated_at: iso(now),
      })
      .where('id', '=', job.id)
      .where('lease_token', '=', job.leaseToken)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return 'lost';
    return exhausted ? 'exhausted' : 'retrying';
  }

  async release(job: ClaimedJob): Promise<void> {
    const now = Date.now();
    await this.#db
      .updateTable('jobs')
      .set((eb) => ({
        state: 'queued',
        attempts: eb('attempts', '-', 1),
        run_at: iso(now),
        lease_token: null,
        locked_until: null,
        updated_at: iso(now),
      }))
      .where('id', '=', job.id)
      .where('lease_token', '=', job.leaseToken)
      .execute();
  }

  /**
   * Re-queues running jobs whose lease expired (their process died); the lost run has used up its
   * attempt. A job without attempts left is first handed to `giveUp` and then marked failed, so a
   * crash in between only means the next sweep reports it again (at-least-once, like the jobs).
   */
  async sweep(giveUp: (job: ExhaustedJob) => Promise<void>): Promise<void> {
    const now = Date.now();
    if (now - this.#lastPurge > PURGE_INTERVAL_MS) {
      this.#lastPurge = now;
      // Given-up jobs stay a week for inspection (their tasks carry the user-facing error).
      await this.#db
        .deleteFrom('jobs')
        .where('state', '=', 'failed')
        .where('updated_at', '<', iso(now - FAILED_JOB_RETENTION_MS))
        .execute();
    }
    const expired = await this.#db
      .selectFrom('jobs')
      .selectAll()
      .where('state', '=', 'running')
      .where('locked_until', '<', iso(now))
      .limit(100)
      .execute();
    for (const row of expired) {
      const exhausted = row.attempts >= row.max_attempts;
      if (exhausted) {
        const job = toClaimed(row);
        await giveUp({ jobId: job.id, kind: job.kind, payload: job.payload, attempts: job.attempts, lastError: 'lease expired' });
      }
      // Fenced on the expired run's token, so of two processes sweeping at once only one acts.
      await this.#db
        .updateTable('jobs')
        .set({
          state: exhausted ? 'failed' : 'queued',
          run_at: iso(now),
          lease_token: null,
          locked_until: null,
          last_error: 'lease expired',
          updated_at: iso(now),
        })
        .where('id', '=', row.id)
        .where('lease_token', '=', row.lease_token)
        .where('state', '=', 'running')
        .execute();
    }
  }
}

function toClaimed(row: JobRow): ClaimedJob {
  return {
    id: row.id,
    kind: row.kind as JobKind,
    payload: JSON.parse(row.payload_json) as JobPayloads[JobKind],
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    leaseToken: row.lease_token ?? '',
  };
}
