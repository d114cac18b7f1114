// The worker: runs the queue's jobs (signing tasks, webhook deliveries, upload sweeps, per-device
// super signature builds) over the shared domain. `signet serve` runs it beside the API in one
// process; `signet worker` runs it alone (several may share one PostgreSQL database and S3 store).
import path from 'node:path';
import type { Worker } from '../queue/job-queue.ts';
import type { Logger } from '../services/logger.ts';
import type { Signer } from '../services/signer.ts';
import { SignerPool } from '../services/signer-pool.ts';
import { TaskWorker } from '../services/worker.ts';
import { DeviceFlow } from '../super-signature/device-flow.ts';
import { SuperTaskSigner } from '../super-signature/super-task-signer.ts';
import type { Domain } from './domain.ts';
import { productionSigners } from './signers.ts';

export interface RunningWorker {
  /** Stops taking jobs and hands running tasks back to the queue. */
  close(): Promise<void>;
}

export function startWorker(domain: Domain, options: { logger: Logger; signers?: readonly Signer[] }): RunningWorker {
  const { config, db, queue, blobs, logger } = { ...domain, logger: options.logger };
  let pool: SignerPool | null = null;
  const deviceFlow = new DeviceFlow({
    db,
    blobs,
    accounts: domain.developerAccounts,
    signer: domain.deviceSigner,
    workDir: path.join(domain.scratch.dir, 'super'),
    logger,
  });
  const taskWorker = new TaskWorker({
    db,
    queue,
    blobs,
    signers: [
      // describeApp false: an APK task keeps the identity its upload was inspected for (the task
      // worker's fallback when the signer reports none). Android signing changes no byte of the
      // manifest or resources, so reading it back from the output gave the same answer again for
      // ~70 ms per 191 MiB APK task (timed in bench/apk.ts's server).
      ...(options.signers ?? productionSigners((pool = new SignerPool({ threads: config.workerConcurrency, settings: domain.signingSettings, describeApp: false })).run)),
      // In-process: it calls App Store Connect and reads developer accounts from the database.
      new SuperTaskSigner({ db, accounts: domain.developerAccounts, engine: domain.deviceSigner }),
    ],
    tasks: domain.tasks,
    uploads: domain.uploads,
    webhooks: domain.webhooks,
    events: domain.events,
    scratch: domain.scratch,
    // A task re-signing a release for a rotation takes over that release's link instead.
    onSucceeded: async (task) => ((await domain.rotations.onTaskSucceeded(task)) ? null : domain.distributions.publish(task)),
    onSigned: (task, seconds, outcome) => domain.metrics.signingDuration.observe({ platform: task.platform, cert_type: task.cert_type, outcome }, seconds),
    logger,
  });
  const worker: Worker = queue.start({
    handlers: {
      ...taskWorker.handlers(),
      super_device: (payload, context) => deviceFlow.run(payload.enrollmentId, context),
    },
    concurrency: config.workerConcurrency,
    onExhausted: (job) => taskWorker.onExhausted(job),
    onError: (error) => logger.error({ err: error }, 'job queue error'),
  });
  domain.attachLogger(logger);
  const stopUploadSweeper = taskWorker.startSweeper();
  const stopMonitor = domain.lifecycle.start();
  const stopSweeper = async () => {
    await Promise.all([stopUploadSweeper(), stopMonitor()]);
  };
  return {
    close: async () => {
      await stopSweeper();
      await worker.stop();
      await pool?.close();
    },
  };
}
