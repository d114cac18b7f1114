// The ONLY wiring of the service, composed of two visible entry points over one shared domain
// (domain.ts: config → database → blob store → job queue → domain services):
//   api.ts     the HTTP app (API v1, console, install pages);
//   worker.ts  the job runner (signing tasks, webhooks, sweeps, per-device builds).
// `signet serve` runs both in one process (the default, `npm start`); `signet worker` runs only
// the worker. Tests call these too (with their own signers) to run real processes in-process.
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import type { QueueTuning } from '../queue/open-job-queue.ts';
import type { LifecycleMonitor } from '../services/lifecycle-monitor.ts';
import type { Signer } from '../services/signer.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { DeviceBuildSigner } from '../super-signature/device-signer.ts';
import { buildApi } from './api.ts';
import { openDomain } from './domain.ts';
import { startWorker, type RunningWorker } from './worker.ts';

export interface ServiceOverrides {
  /** Replaces the production signers (tests). */
  signers?: readonly Signer[];
  /** fastify logger option; default: JSON logs on stdout at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  queueTuning?: QueueTuning;
  /**
   * Called with the one-time setup link while no console user exists (default: printed on the
   * terminal, i.e. stderr, not into the JSON log stream on stdout).
   */
  onSetupLink?: (url: string) => void;
  /** The console's build folder (default: console/dist of this checkout). */
  consoleDir?: string | null;
  /** Super signature engines and App Store Connect client tuning (tests). */
  superSignature?: { deviceSigner?: DeviceBuildSigner; ascOptions?: { baseDelayMs?: number; maxRetries?: number } };
  /** Resumable uploads: how long an unfinished one lives and how often expired ones are swept (tests). */
  resumable?: { expirationMs?: number; sweepIntervalMs?: number };
}

export interface RunningService {
  app: FastifyInstance;
  /** e.g. http://127.0.0.1:8080 (the actual port when config.port is 0). */
  url: string;
  db: Db;
  queue: JobQueue;
  blobs: BlobStore;
  /** Certificate and developer-account health (its periodic check runs where a worker runs). */
  lifecycle: LifecycleMonitor;
  /** Graceful shutdown: aborts uploads, hands running tasks back to the queue, closes everything. */
  close(): Promise<void>;
}

export interface RunningWorkerService {
  db: Db;
  queue: JobQueue;
  blobs: BlobStore;
  /** Graceful shutdown: hands running tasks back to the queue, closes everything. */
  close(): Promise<void>;
}

/** Where `npm run build:console` puts the console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/** The API and (unless config.workerConcurrency is 0) the worker, in this process. */
export async function startService(config: Config, overrides: ServiceOverrides = {}): Promise<RunningService> {
  const domain = await openDomain(config, overrides);
  let worker: RunningWorker | null = null;
  let app: FastifyInstance | null = null;
  try {
    const api = await buildApi(domain, {
      consoleDir: overrides.consoleDir === undefined ? CONSOLE_DIST : overrides.consoleDir,
      ...(overrides.logger === undefined ? {} : { logger: overrides.logger }),
      ...(overrides.onSetupLink === undefined ? {} : { onSetupLink: overrides.onSetupLink }),
      ...(overrides.resumable === undefined ? {} : { resumable: overrides.resumable }),
    });
    app = api.app;
    if (config.workerConcurrency > 0) worker = startWorker(domain, { logger: api.app.log, ...(overrides.signers ? { signers: overrides.signers } : {}) });
    const running = await api.listen();
    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        // HTTP first (uploads are aborted by the app's preClose hook), then the worker hands
        // running tasks back, then the connections go.
        await running.close();
        await worker?.close();
        await domain.close();
      })());
    return { app: running.app, url: running.url, db: domain.db, queue: domain.queue, blobs: domain.blobs, lifecycle: domain.lifecycle, close };
  } catch (error) {
    await app?.close().catch(() => {});
    await worker?.close().catch(() => {});
    await domain.close();
    throw error;
  }
}

/** Only the worker (`signet worker`): no HTTP listener; logs JSON lines on stdout like the API. */
export async function startWorkerService(config: Config, overrides: Pick<ServiceOverrides, 'signers' | 'queueTuning' | 'superSignature'> = {}): Promise<RunningWorkerService> {
  if (config.workerConcurrency < 1) throw new Error('signet worker needs SIGNET_WORKER_CONCURRENCY of 1 or more');
  const domain = await openDomain(config, overrides);
  const logger = pino({ level: config.logLevel, enabled: config.logLevel !== 'silent' });
  let worker: RunningWorker;
  try {
    worker = startWorker(domain, { logger, ...(overrides.signers ? { signers: overrides.signers } : {}) });
  } catch (error) {
    await domain.close();
    throw error;
  }
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      await worker.close();
      await domain.close();
    })());
  return { db: domain.db, queue: domain.queue, blobs: domain.blobs, close };
}
