// The background-job seam. Two implementations pass one contract suite
// (test/queue/job-queue.contract.ts): TableJobQueue (a `jobs` table in Signet's own database; the
// embedded default on SQLite) and GraphileJobQueue (graphile-worker on PostgreSQL, LISTEN/NOTIFY).
//
// Delivery is at-least-once. A job is claimed with a lease that the queue renews (heartbeats)
// while its handler runs; if the process dies (kill -9) the lease expires, a sweep re-queues the
// job and it runs again, each run counting as an attempt. Handlers must therefore be idempotent and
// guard their terminal writes (see TaskRepository.finish), which is how a task ends in exactly one
// terminal state even when two runs overlap.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

/** Every job kind and its payload. Payloads are small JSON; bulky state lives in the database. */
export interface JobPayloads {
  /** Sign (and verify) the task's input; the handler owns the task's status transitions. */
  sign_task: { taskId: string };
  /** Deliver one webhook event for a task (one attempt per run; retries use the queue's backoff). */
  deliver_webhook: { taskId: string; event: string };
  /** Deliver one account event to one account webhook (same retries as deliver_webhook). */
  deliver_event: { webhookId: string; eventId: string };
  /** Delete expired uploads and their blobs. */
  sweep_uploads: Record<string, never>;
  /** Super signature: register a captured device at Apple, make its profile and its build. */
  super_device: { enrollmentId: string };
}
export type JobKind = keyof JobPayloads;
export const JOB_KINDS: readonly JobKind[] = ['sign_task', 'deliver_webhook', 'deliver_event', 'sweep_uploads', 'super_device'];
/** EnqueueOptions.maxAttempts when not given. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** Timing of a queue implementation (both implementations read the same fields). */
export interface QueueTuning {
  /** How long a claimed job stays leased without a heartbeat (default 30 s). */
  leaseMs?: number;
  /** Idle polling period for jobs enqueued by other processes (default 1 s; graphile also uses LISTEN/NOTIFY). */
  pollIntervalMs?: number;
}

export interface EnqueueOptions {
  /** Earliest start (default: now). */
  runAt?: Date;
  /** Runs allowed before the job is given up (default DEFAULT_MAX_ATTEMPTS). Crashes and thrown errors both count. */
  maxAttempts?: number;
  /**
   * De-duplication key: while a job with this key is still queued (not yet running), enqueueing
   * another with the same key replaces its payload/runAt instead of adding a second job.
   */
  jobKey?: string;
  /**
   * Insert through this transaction so the job commits (or rolls back) together with the
   * caller's rows, e.g. the task row and its sign_task job. Must be the queue's own database.
   * Inside Db.transaction this is REQUIRED on SQLite (see Db.transaction: one connection).
   */
  transaction?: Kysely<Database>;
}

export interface JobContext {
  readonly jobId: string;
  readonly kind: JobKind;
  /** 1 for the first run; includes runs lost to crashes. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /**
   * Aborted when the worker is stopping (reason: JobReleasedError) or the lease was lost to a
   * sweep (reason: JobLeaseLostError). Stop promptly. After a JobReleasedError, throwing (any
   * error) hands the job back to the queue WITHOUT consuming an attempt, while returning normally
   * completes it as usual. After a lost lease nothing the handler does changes the job any more.
   */
  readonly signal: AbortSignal;
}

export type JobHandler<K extends JobKind> = (payload: JobPayloads[K], context: JobContext) => Promise<void>;
export type JobHandlers = { [K in JobKind]?: JobHandler<K> };

/** A job that will never run again without having completed. */
export interface ExhaustedJob<K extends JobKind = JobKind> {
  jobId: string;
  kind: K;
  payload: JobPayloads[K];
  attempts: number;
  /** Why the last run ended: the thrown error's message, or "lease expired" after a crash. */
  lastError: string;
}

export interface WorkerOptions {
  handlers: JobHandlers;
  /** Jobs run at once by this worker (>= 1). */
  concurrency: number;
  /**
   * Called when a job is given up: its handler threw on the last attempt, or its last lease
   * expired (the process running it died). E.g. marks the task failed with
   * `task_attempts_exhausted`. At-least-once like the jobs themselves (a crash right after the
   * call reports the job again), so it must be idempotent. Errors thrown here go to onError and
   * the job is dropped anyway.
   */
  onExhausted?: (job: ExhaustedJob) => Promise<void>;
  /** Errors the queue cannot hand to anyone (a failed sweep, a failed heartbeat write). */
  onError?: (error: unknown) => void;
}

export interface Worker {
  /**
   * Graceful shutdown: stops claiming, aborts running handlers' signals with JobReleasedError,
   * waits for them to settle and hands their jobs back to the queue (attempt not consumed).
   * Resolves when nothing of this worker is running any more.
   */
  stop(): Promise<void>;
}

export interface JobQueue {
  readonly kind: 'table' | 'graphile';
  /** Adds a job and returns its id. A handler for `kind` must exist on some worker. */
  enqueue<K extends JobKind>(kind: K, payload: JobPayloads[K], options?: EnqueueOptions): Promise<string>;
  /** Starts claiming and running jobs in this process. May be called more than once (each call is a separate worker). */
  start(options: WorkerOptions): Worker;
  /** Stops every worker started here (as Worker.stop) and releases connections. */
  close(): Promise<void>;
}

/** Abort reason given to a running handler when its worker stops; the job is handed back. */
export class JobReleasedError extends Error {
  constructor() {
    super('worker stopping; job handed back to the queue');
    this.name = 'JobReleasedError';
  }
}

/** Abort reason when the job's lease expired and was swept; another run may already own it. */
export class JobLeaseLostError extends Error {
  constructor() {
    super('job lease expired; another run may own the job');
    this.name = 'JobLeaseLostError';
  }
}

/** Rejects enqueue options no implementation can honour (a programming error, not user input). */
export function assertEnqueueOptions(options: EnqueueOptions): void {
  const { maxAttempts, runAt } = options;
  if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 1000)) {
    throw new RangeError(`maxAttempts must be an integer from 1 to 1000, got ${maxAttempts}`);
  }
  if (runAt !== undefined && Number.isNaN(runAt.getTime())) throw new RangeError('runAt is an invalid Date');
}

/**
 * What both implementations' workers need from WorkerOptions: the checked concurrency, the error
 * sink, and `giveUp`, which calls onExhausted and reports (never throws) its failure.
 */
export function workerCallbacks(options: WorkerOptions): { reportError: (error: unknown) => void; giveUp: (job: ExhaustedJob) => Promise<void> } {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new Error('worker concurrency must be an integer >= 1');
  const reportError = options.onError ?? ((error: unknown) => console.error('job queue:', error));
  const giveUp = async (job: ExhaustedJob): Promise<void> => {
    try {
      await options.onExhausted?.(job);
    } catch (error) {
      reportError(error);
    }
  };
  return { reportError, giveUp };
}

/** The workers a queue has started, so that close() can stop those still running. */
export class WorkerSet {
  readonly #workers = new Set<Worker>();

  /** Tracks `worker` until it stops; the returned handle is what JobQueue.start hands out. */
  add(worker: Worker): Worker {
    this.#workers.add(worker);
    return {
      stop: async () => {
        await worker.stop();
        this.#workers.delete(worker);
      },
    };
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#workers].map((worker) => worker.stop()));
    this.#workers.clear();
  }
}
