// The worker loop over lease primitives (claim, heartbeat, complete, fail, release, sweep). The
// table queue drives it; graphile-worker brings its own loop (see graphile-job-queue.ts).
import type { ExhaustedJob, JobContext, JobKind, JobPayloads, Worker, WorkerOptions } from './job-queue.ts';
import { JOB_KINDS, JobLeaseLostError, JobReleasedError, workerCallbacks } from './job-queue.ts';

export interface ClaimedJob {
  id: string;
  kind: JobKind;
  payload: JobPayloads[JobKind];
  /** Including this run. */
  attempts: number;
  maxAttempts: number;
  leaseToken: string;
}

export interface LeaseStore {
  claim(kinds: readonly JobKind[]): Promise<ClaimedJob | null>;
  /** Extends the lease; false when it was lost (swept and possibly re-claimed elsewhere). */
  heartbeat(job: ClaimedJob): Promise<boolean>;
  complete(job: ClaimedJob): Promise<void>;
  /** Records a failed run: re-queued with backoff, or failed for good when out of attempts. */
  fail(job: ClaimedJob, error: string): Promise<'retrying' | 'exhausted' | 'lost'>;
  /** Hands a job back without consuming its attempt (graceful shutdown). */
  release(job: ClaimedJob): Promise<void>;
  sweep(giveUp: (job: ExhaustedJob) => Promise<void>): Promise<void>;
}

export interface RunWorkerOptions extends WorkerOptions {
  leaseMs: number;
  pollIntervalMs: number;
  /** Registers a wake-up call for newly enqueued jobs; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export function runWorker(store: LeaseStore, options: RunWorkerOptions): Worker {
  const { reportError, giveUp } = workerCallbacks(options);
  const kinds = JOB_KINDS.filter((kind) => options.handlers[kind] !== undefined);
  const running = new Set<Promise<void>>();
  const controllers = new Set<AbortController>();
  let stopping = false;
  let wake: (() => void) | null = null;
  let woken = false; // an enqueue arrived while the loop was busy: skip the next sleep
  let lastSweep = 0;

  const nudge = () => {
    woken = true;
    wake?.();
  };
  const unsubscribe = options.subscribe(nudge);

  const execute = async (job: ClaimedJob): Promise<void> => {
    const controller = new AbortController();
    controllers.add(controller);
    // Renew at a third of the lease, so two missed beats still leave time before expiry.
    const beat = setInterval(() => {
      store.heartbeat(job).then(
        (held) => {
          if (!held) controller.abort(new JobLeaseLostError());
        },
        reportError,
      );
    }, Math.max(10, Math.floor(options.leaseMs / 3)));
    const context: JobContext = {
      jobId: job.id,
      kind: job.kind,
      attempt: job.attempts,
      maxAttempts: job.maxAttempts,
      signal: controller.signal,
    };
    let failure: { error: unknown } | null = null;
    try {
      const handler = options.handlers[job.kind] as ((payload: unknown, context: JobContext) => Promise<void>) | undefined;
      if (handler === undefined) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(job.payload, context);
    } catch (error) {
      failure = { error };
    } finally {
      clearInterval(beat);
      controllers.delete(controller);
    }
    const reason: unknown = controller.signal.reason;
    // A run that lost its lease no longer owns the job: whatever it did, leave the job alone.
    if (reason instanceof JobLeaseLostError) return;
    if (failure === null) return store.complete(job);
    if (reason instanceof JobReleasedError) return store.release(job);
    const message = failure.error instanceof Error ? failure.error.message : String(failure.error);
    // onExhausted before the write that drops the job: a crash in between re-reports it (sweep).
    if (job.attempts >= job.maxAttempts) {
      await giveUp({ jobId: job.id, kind: job.kind, payload: job.payload, attempts: job.attempts, lastError: message });
    }
    await store.fail(job, message);
  };

  const loop = async (): Promise<void> => {
    while (!stopping) {
      try {
        if (Date.now() - lastSweep >= options.pollIntervalMs) {
          lastSweep = Date.now();
          await store.sweep(giveUp);
        }
        let claimed = false;
        while (!stopping && running.size < options.concurrency) {
          const job = await store.claim(kinds);
          if (job === null) break;
          claimed = true;
          const run = execute(job).catch(reportError);
          running.add(run);
          void run.finally(() => {
            running.delete(run);
            nudge();
          });
        }
        if (claimed && running.size < options.concurrency) continue;
      } catch (error) {
        reportError(error);
      }
      if (stopping) break;
      if (woken) {
        woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollIntervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
      woken = false;
    }
  };

  const looping = loop();
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        stopping = true;
        unsubscribe();
        nudge();
        for (const controller of controllers) controller.abort(new JobReleasedError());
        await looping;
        await Promise.all(running);
      })();
      return stopped;
    },
  };
}
