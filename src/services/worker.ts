// The task worker: job handlers for the JobQueue. sign_task runs a task through its Signer:
// claim (TaskRepository.start), sign + verify from the upload read where it is stored
// (BlobStore.openSource) into a local file, store the artifact, then ONE transaction that ends
// the task and enqueues its webhook. The queue provides the lease and heartbeats; a run lost to
// a crash is re-run (counted as an attempt) and the terminal write is a compare-and-set, so
// every task ends in exactly one terminal state.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Db } from '../db/database.ts';
import type { TaskOutcome } from '../db/repositories.ts';
import type { TaskRow } from '../db/schema.ts';
import { ERROR_CATALOGUE, errorCodeOf } from '../errors.ts';
import { JobReleasedError, type ExhaustedJob, type JobContext, type JobHandlers, type JobQueue } from '../queue/job-queue.ts';
import type { DataSource } from '../signing/data-source.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { ProcessScratch } from '../storage/scratch.ts';
import { artifactBlobKey } from '../storage/blob-keys.ts';
import type { Logger } from './logger.ts';
import type { CertType, Signer } from './signer.ts';
import type { TaskService } from './tasks.ts';
import type { UploadService } from './uploads.ts';
import type { AccountEventService } from './account-events.ts';
import { WEBHOOK_MAX_ATTEMPTS, type WebhookService } from './webhooks.ts';

export interface TaskWorkerOptions {
  db: Db;
  queue: JobQueue;
  blobs: BlobStore;
  signers: readonly Signer[];
  tasks: TaskService;
  uploads: UploadService;
  webhooks: WebhookService;
  /** Account events (task.succeeded / task.failed to account webhooks). */
  events?: AccountEventService;
  /** This process's scratch (under the data dir): each attempt works in a folder of its own. */
  scratch: Pick<ProcessScratch, 'folder'>;
  logger: Logger;
  /** How often a running task checks whether it was canceled by another process (default 2 s). */
  cancelPollMs?: number;
  /** Period of the expired-upload sweep (default 10 min). */
  sweepIntervalMs?: number;
  /**
   * Runs once a task has succeeded (publishing its install link). A failure here is logged and
   * does not undo the success: the link is created on first request instead.
   */
  onSucceeded?: (task: TaskRow) => Promise<unknown>;
  /** Reports each signing run's duration (metrics); `outcome` is ok, a catalogue code, or error. */
  onSigned?: (task: TaskRow, seconds: number, outcome: string) => void;
}

class TaskCanceled extends Error {}

/**
 * An exception the signing engine raised on this task's input that is neither a catalogue verdict
 * nor a failure of the machine (see isTransient): the same input would raise it again, so the
 * task fails on this attempt instead of being retried.
 */
class EngineFailure extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'EngineFailure';
  }
}

/** System error codes (errno, worker threads, aborts, undici) that say nothing about the input. */
const TRANSIENT_CODE = /^(E[A-Z][A-Z0-9]+|ERR_WORKER_[A-Z_]+|ERR_STREAM_PREMATURE_CLOSE|ABORT_ERR|UND_ERR_[A-Z_]+)$/;
/** A system error's message after crossing a thread boundary as text: "ENOSPC: no space left on device, write". */
const TRANSIENT_MESSAGE = /(^|: )E[A-Z][A-Z0-9]+: /;

/**
 * Whether an error is the machine's rather than the input's: out of disk, file handles or memory,
 * a killed thread, an aborted or timed-out operation. Those are worth another attempt; anything
 * else an engine throws would recur.
 */
export function isTransient(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODE.test(code)) return true;
    if (e.name === 'AbortError' || e.name === 'TimeoutError' || TRANSIENT_MESSAGE.test(e.message)) return true;
  }
  return false;
}

export class TaskWorker {
  private readonly options: TaskWorkerOptions;
  private readonly running = new Map<string, AbortController>();

  constructor(options: TaskWorkerOptions) {
    this.options = options;
    // Same-process cancels abort at once; other processes' cancels are seen by the poll.
    options.tasks.onCancel((taskId) => this.running.get(taskId)?.abort(new TaskCanceled()));
  }

  handlers(): JobHandlers {
    return {
      sign_task: (payload, context) => this.runTask(payload.taskId, context),
      deliver_webhook: (payload, context) => this.options.webhooks.deliver(payload, context),
      deliver_event: (payload, context) => this.options.webhooks.deliverEvent(payload, context),
      sweep_uploads: () => this.sweep(),
    };
  }

  /**
   * Runs the expired-upload sweep now and then every `sweepIntervalMs` in this process. Sweeps
   * are idempotent, so several workers sweeping the same database is harmless. Returns a stop
   * function that resolves once a sweep in progress has finished.
   */
  startSweeper(): () => Promise<void> {
    let running: Promise<void> | null = null;
    const tick = () => {
      running ??= this.sweep()
        .catch((error: unknown) => this.options.logger.error({ err: error }, 'upload sweep failed'))
        .finally(() => (running = null));
    };
    tick();
    const timer = setInterval(tick, this.options.sweepIntervalMs ?? 600_000);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await running;
    };
  }

  private async sweep(): Promise<void> {
    const deleted = await this.options.uploads.sweepExpired();
    await this.options.db.repos.idempotency.purge(new Date(Date.now() - 7 * 86400_000));
    if (deleted > 0) this.options.logger.info({ deleted }, 'expired uploads deleted');
  }

  /** A job given up by the queue (its last run crashed or threw): the task fails for good. */
  async onExhausted(job: ExhaustedJob): Promise<void> {
    if (job.kind !== 'sign_task') {
      this.options.logger.warn({ job_id: job.jobId, kind: job.kind, attempts: job.attempts, last_error: job.lastError }, 'job given up');
      return;
    }
    const { taskId } = job.payload as { taskId: string };
    const row = await this.finish(taskId, {
      status: 'failed',
      error: { code: 'task_attempts_exhausted', message: `${ERROR_CATALOGUE.task_attempts_exhausted} (${job.attempts} attempts; last: ${job.lastError})` },
    });
    if (row) this.options.logger.warn({ task_id: taskId, attempts: job.attempts }, 'task failed: attempts exhausted');
  }

  private signerFor(task: TaskRow): Signer | undefined {
    return this.options.signers.find((s) => s.platform === task.platform && s.certTypes.includes(task.cert_type));
  }

  private async runTask(taskId: string, context: JobContext): Promise<void> {
    const { db, logger } = this.options;
    const task = await db.repos.tasks.start(taskId, context.attempt);
    if (!task) return; // already terminal (canceled while queued, or finished by an earlier run)
    const log = { task_id: task.id, attempt: context.attempt, platform: task.platform, cert_type: task.cert_type };
    logger.info(log, 'task started');

    const signer = this.signerFor(task);
    if (!signer) {
      await this.finish(task.id, {
        status: 'failed',
        error: { code: 'signer_unavailable', message: `No signing engine for ${task.platform} (${task.cert_type}) is available in this build of Signet.` },
      });
      logger.warn(log, 'task failed: no signer');
      return;
    }
    const certificate = task.certificate_id === null ? null : await db.repos.certificates.find(task.account_id, task.certificate_id);
    const profiles = certificate !== null && certificate !== undefined && certificate.kind !== 'android' ? await db.repos.certificateProfiles.list(task.account_id, certificate.id) : [];
    const options = JSON.parse(task.options_json) as { profiles?: Record<string, string> };
    // Super tasks have no certificate row: their signer uses the account's developer accounts.
    if (!certificate && task.cert_type !== 'super') {
      await this.finish(task.id, { status: 'failed', error: { code: 'certificate_required', message: 'The task\'s certificate no longer exists.' } });
      return;
    }

    const cancel = new AbortController();
    this.running.set(task.id, cancel);
    const poll = setInterval(() => {
      db.repos.tasks.find(null, task.id).then(
        (now) => {
          if (now?.status === 'canceled') cancel.abort(new TaskCanceled());
        },
        () => {},
      );
    }, this.options.cancelPollMs ?? 2000);
    const signal = AbortSignal.any([context.signal, cancel.signal]);
    const extension = task.platform === 'ios' ? 'ipa' : 'apk';
    const runId = `${context.attempt}-${randomBytes(6).toString('hex')}`;
    // The attempt's folder holds the output and whatever the signer writes beside it; it goes in
    // `finally`, and with the process's scratch if the process dies.
    const attemptDir = await this.options.scratch.folder(`${task.id}-${runId}`);
    const outputPath = path.join(attemptDir, `signed.${extension}`);
    let artifactKey: string | null = null;
    let input: DataSource | null = null;
    try {
      // The input is read where it is stored (the file on disk, range GETs on S3), never copied
      // here first; only the output is local (APK v2 and Mach-O rewriting need random access).
      input = await this.options.blobs.openSource(task.input_blob_key, { signal });
      const started = performance.now();
      const report = (outcome: string) => this.options.onSigned?.(task, (performance.now() - started) / 1000, outcome);
      const result = await signer
        .sign({
          taskId: task.id,
          platform: task.platform,
          certType: task.cert_type,
          input,
          outputPath,
          credential: certificate
            ? db.repos.certificates.credential(certificate, profiles.map((p) => ({ id: p.id, bytes: db.repos.certificateProfiles.open(p) })))
            : { kind: 'developer_accounts', accountId: task.account_id },
          ...(options.profiles ? { profileChoice: options.profiles } : {}),
          signal,
        })
        .then(
          (result) => {
            report('ok');
            return result;
          },
          (error: unknown) => {
            report(signal.aborted ? 'aborted' : (errorCodeOf(error) ?? 'error'));
            throw errorCodeOf(error) !== null || signal.aborted || isTransient(error) ? error : new EngineFailure(error);
          },
        );
      await input.close();
      input = null;
      signal.throwIfAborted();
      artifactKey = artifactBlobKey(task.id, runId, extension);
      // The output is handed over, not copied: on disk it is renamed into place (the attempt's
      // folder is under the data dir, like the blobs), read once for its hash. Streaming it
      // through put wrote a second copy: ~0.4-0.9 s of a 191 MiB APK's service path (bench/apk.ts),
      // more than the upload itself. S3 uploads the file as put did.
      const stored = await this.options.blobs.adoptFile(outputPath, artifactKey, { signal });
      const won = await this.finish(task.id, {
        status: 'succeeded',
        artifact: { blobKey: artifactKey, size: stored.size, sha256: stored.sha256 },
        // What the signer reports wins (an override may have changed the bundle id); what it
        // does not report keeps the identity read from the upload.
        app: {
          bundleId: result.app.bundleId ?? task.bundle_id,
          name: result.app.name ?? task.app_name,
          version: result.app.version ?? task.app_version,
          build: result.app.build ?? task.app_build,
        },
        verification: result.verification,
        ...(result.bundles ? { bundles: result.bundles } : {}),
        ...(result.warnings ? { warnings: result.warnings } : {}),
      });
      if (!won) {
        // Canceled meanwhile, or another run of this task finished first: ours is discarded.
        await this.options.blobs.delete(artifactKey);
        logger.info(log, 'task result discarded: the task already ended');
      } else {
        logger.info({ ...log, size: stored.size }, 'task succeeded');
        await this.options.onSucceeded?.(won).catch((error: unknown) => logger.error({ ...log, err: error }, 'publishing the install link failed'));
      }
    } catch (error) {
      if (artifactKey) await this.options.blobs.delete(artifactKey).catch(() => {});
      await this.failed(task, context, error, cancel.signal);
    } finally {
      clearInterval(poll);
      this.running.delete(task.id);
      await input?.close().catch(() => {});
      await fs.rm(attemptDir, { recursive: true, force: true });
    }
  }

  /** Decides what a thrown error means for the task; rethrows when the queue should retry. */
  private async failed(task: TaskRow, context: JobContext, error: unknown, canceled: AbortSignal): Promise<void> {
    const { db, logger } = this.options;
    const log = { task_id: task.id, attempt: context.attempt };
    if (canceled.aborted) {
      await this.finish(task.id, { status: 'canceled' });
      logger.info(log, 'task canceled while running');
      return;
    }
    if (context.signal.aborted) {
      // Worker stopping: hand the task back untouched; lease lost: another run owns it now.
      if (context.signal.reason instanceof JobReleasedError) await db.repos.tasks.handBack(task.id);
      throw context.signal.reason;
    }
    const code = errorCodeOf(error);
    if (code) {
      // A catalogue error is a verdict on this input; running it again gives the same answer.
      await this.finish(task.id, { status: 'failed', error: { code, message: error instanceof Error ? error.message : ERROR_CATALOGUE[code] } });
      logger.info({ ...log, error_code: code }, 'task failed');
      return;
    }
    if (error instanceof EngineFailure) {
      // Logged with its stack: an engine should answer bad input with a catalogue code, so this is a bug to fix.
      logger.error({ ...log, err: error.cause }, 'signing engine failed on this input; not retried');
      await this.finish(task.id, {
        status: 'failed',
        error: { code: 'signing_failed', message: `${ERROR_CATALOGUE.signing_failed} The signing engine could not process this package; running it again would give the same result.` },
      });
      return;
    }
    logger.error({ ...log, err: error }, 'task run crashed');
    if (context.attempt >= context.maxAttempts) {
      await this.finish(task.id, { status: 'failed', error: { code: 'signing_failed', message: `${ERROR_CATALOGUE.signing_failed} (after ${context.attempt} attempts)` } });
      return;
    }
    await db.repos.tasks.handBack(task.id);
    throw error;
  }

  /** The terminal write and the webhook job, committed together (a crash cannot lose the webhook). */
  private async finish(taskId: string, outcome: TaskOutcome): Promise<TaskRow | null> {
    return this.options.db.transaction(async (tx) => {
      const row = await tx.repos.tasks.finish(taskId, outcome);
      if (row?.callback_url && outcome.status !== 'canceled') {
        const event = `task.${outcome.status}`;
        await this.options.queue.enqueue('deliver_webhook', { taskId, event }, { transaction: tx.kysely, maxAttempts: WEBHOOK_MAX_ATTEMPTS });
      }
      // The terminal write is a compare-and-set: only the run that ended the task announces it.
      if (row && (outcome.status === 'succeeded' || outcome.status === 'failed')) {
        await this.options.events?.emit({ accountId: row.account_id, type: `task.${outcome.status}`, subjectId: row.id, data: { task_id: row.id, status: row.status } }, tx);
      }
      return row;
    });
  }
}
