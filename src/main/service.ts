// The ONLY wiring of the service: config → database → blob store → job queue → signers →
// domain services → HTTP app (+ the embedded worker). `signet serve` calls startService; tests
// call it too (with their own signers) to run a real listening server in-process or in a child.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { sql } from 'kysely';
import { ConfigError, publicBaseUrl, type Config } from '../config.ts';
import { openDatabase, type Db } from '../db/database.ts';
import { ReleaseReader } from '../distribution/release-reader.ts';
import { DistributionService } from '../distribution/service.ts';
import { DeviceFlow } from '../super-signature/device-flow.ts';
import type { DeviceBuildSigner } from '../super-signature/device-signer.ts';
import { EnrollmentService } from '../super-signature/enrollment.ts';
import { resigningDeviceSigner } from '../super-signature/resigning-device-signer.ts';
import { buildHttpApp } from '../http/app.ts';
import { openJobQueue, type QueueTuning } from '../queue/open-job-queue.ts';
import type { JobQueue, Worker } from '../queue/job-queue.ts';
import { FileSource } from '../signing/data-source.ts';
import { inspectPackage } from '../signing/inspect/index.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { openBlobStore } from '../storage/open-blob-store.ts';
import { openResumableStore } from '../storage/resumable-store.ts';
import { ProcessScratch, sweepDeadOwners } from '../storage/scratch.ts';
import { ApiKeyService } from '../services/api-keys.ts';
import { AppService } from '../services/apps.ts';
import { CertificateService, type ProfileReader } from '../services/certificates.ts';
import type { Signer } from '../services/signer.ts';
import { TaskService } from '../services/tasks.ts';
import { UploadService, type PackageInspector } from '../services/uploads.ts';
import { WebhookService } from '../services/webhooks.ts';
import { AccountDeletionService } from '../services/account-deletion.ts';
import { InvitationService } from '../services/invitations.ts';
import { SessionService } from '../services/sessions.ts';
import { SetupService } from '../services/setup.ts';
import { UserService } from '../services/users.ts';
import { DeveloperAccountService } from '../services/developer-accounts.ts';
import { SuperTaskSigner } from '../super-signature/super-task-signer.ts';
import { KeystoreReader } from '../services/keystore-reader.ts';
import { Metrics } from '../services/metrics.ts';
import { OutboundAllowList, type OutboundOptions } from '../services/outbound.ts';
import { SignerPool } from '../services/signer-pool.ts';
import { TaskWorker } from '../services/worker.ts';
import { productionSigners, productionProfileReader } from './signers.ts';

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
  /** Graceful shutdown: aborts uploads, hands running tasks back to the queue, closes everything. */
  close(): Promise<void>;
}

/** Where `npm run build:console` puts the console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));

const inspectFile: PackageInspector = async (filePath) => {
  const source = await FileSource.open(filePath);
  try {
    const info = await inspectPackage(source, { iconBytes: false });
    return { platform: info.platform, bundleId: info.bundleId, name: info.name, version: info.version, build: info.build };
  } finally {
    await source.close();
  }
};

export async function startService(config: Config, overrides: ServiceOverrides = {}): Promise<RunningService> {
  const db = await openDatabase(config);
  let blobs: BlobStore | null = null;
  let queue: JobQueue | null = null;
  let worker: Worker | null = null;
  let stopSweeper = async (): Promise<void> => {};
  let pool: SignerPool | null = null;
  const releaseReader = new ReleaseReader();
  const keystores = new KeystoreReader();
  let scratch: ProcessScratch | null = null;
  let leftovers: NodeJS.Timeout | null = null;
  try {
    // Temp files: what dead processes left goes first (whatever its age), then this process takes
    // its own folder; a periodic sweep catches processes that die later (several workers may share
    // a data dir).
    const tmpRoot = path.join(config.dataDir, 'tmp');
    await sweepDeadOwners(tmpRoot);
    const ownScratch = (scratch = await ProcessScratch.open(tmpRoot));
    const store = (blobs = await openBlobStore(config, { tempDir: ownScratch.dir }));
    leftovers = setInterval(() => {
      Promise.all([sweepDeadOwners(tmpRoot), store.sweepLeftovers()]).catch(() => {});
    }, 10 * 60_000).unref();
    const jobs = (queue = await openJobQueue(db, config.databaseUrl, overrides.queueTuning));
    const apiKeys = new ApiKeyService(db.repos);
    const metrics = new Metrics({ taskCounts: () => db.repos.tasks.countByStatus() });
    let outbound: OutboundOptions;
    try {
      outbound = { allow: new OutboundAllowList(config.outboundAllow) };
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
    const setup = new SetupService({ db });
    // First run: no user yet. A fresh one-time link on every start until the owner exists.
    const setupToken = await setup.issueToken();

    const baseUrlFor = (port: number) => publicBaseUrl({ ...config, port });
    // The base URL is known once the port is; services read it lazily through this holder.
    const base = { url: baseUrlFor(config.port) };
    const profileReader: ProfileReader | null = productionProfileReader();
    const uploads = new UploadService({
      db,
      blobs,
      inspect: inspectFile,
      maxUploadBytes: config.maxUploadBytes,
      fileKeyTtlSeconds: config.fileKeyTtlSeconds,
      storageQuotaBytes: config.quotas.storageBytes,
      onReceived: (bytes, platform) => metrics.uploadBytes.inc({ platform }, bytes),
    });
    // Super signature: developer accounts (App Store Connect), UDID capture, per-device builds.
    const developerAccounts = new DeveloperAccountService({
      db,
      ascBaseUrl: config.ascBaseUrl,
      readIdentity: async (p12, password) => {
        const { describeCertificate } = await import('../signing/cms/index.ts');
        const identity = await keystores.loadIdentity(p12, { password });
        const info = describeCertificate(identity.certificate);
        return { certificate: identity.certificate, subject: info.subject, serial: info.serialNumber, teamId: info.teamId ?? null, notAfter: info.notAfter };
      },
      ...(overrides.superSignature?.ascOptions ? { ascOptions: overrides.superSignature.ascOptions } : {}),
    });
    const deviceSigner = overrides.superSignature?.deviceSigner ?? resigningDeviceSigner({ appleCaDir: config.appleCaDir, loadIdentity: (p12, options) => keystores.loadIdentity(p12, options) });
    // UDID-capture profiles are signed with SIGNET_PROFILE_SIGNING_*, else the TLS pair, else not
    // at all; the CMS code loads only when there is something to sign with.
    const profileSigningFiles = config.profileSigning ?? config.tls;
    const profileSigner = profileSigningFiles === null ? null : await (await import('../super-signature/profile-signer.ts')).loadProfileSigner(profileSigningFiles);
    const enrollments = new EnrollmentService({
      db,
      queue,
      blobs,
      signer: profileSigner,
      get baseUrl() {
        return base.url;
      },
    });
    const tasks = new TaskService({
      pendingTaskQuota: config.quotas.pendingTasks,
      outbound,
      hasDeveloperAccount: async (accountId) => (await db.repos.developerAccounts.list(accountId)).some((a) => developerAccounts.usable(a)),
      // `distributions` is built below; links are asked for only once requests are served.
      links: (task) => distributions.taskLinks(task),
      db,
      queue,
      blobs,
      get baseUrl() {
        return base.url;
      },
    });
    // Keystores are opened on threads (KeystoreReader), which load the readers (pkijs, node-forge)
    // on the first certificate upload, not at start: megabytes of code most processes never need.
    const certificates = new CertificateService({
      db,
      loadIdentity: (bytes, options) => keystores.loadIdentity(bytes, options),
      readProfile: profileReader,
    });

    const webhooks = new WebhookService({
      db,
      outbound,
      onOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
      links: (task) => distributions.taskLinks(task),
      get baseUrl() {
        return base.url;
      },
    });

    const distributions = new DistributionService({
      db,
      blobs,
      get baseUrl() {
        return base.url;
      },
      readFacts: (key) => store.withLocalFile(key, (file) => releaseReader.read(file)),
    });
    const apps = new AppService({ db, tasks, distributions });

    const baseUrl = () => base.url;
    // The app's logger exists once the app does; the services built before it log through this.
    let appLog: FastifyInstance['log'] | null = null;
    const users = new UserService({ db, baseUrl });
    const consoleDeps = {
      db,
      apiKeys,
      users,
      setup,
      webhooks,
      invitations: new InvitationService({ db, baseUrl }),
      accountDeletion: new AccountDeletionService({ db, blobs: store, tasks, log: (message, error) => appLog?.warn({ err: error }, message) }),
      sessions: new SessionService({ db, settings: config.session, csrfKey: db.secretBox.deriveKey('console-csrf-tokens') }),
      limits: config.signInLimit,
      dir: overrides.consoleDir === undefined ? CONSOLE_DIST : overrides.consoleDir,
    };

    const logger = overrides.logger ?? (config.logLevel === 'silent' ? false : { level: config.logLevel });
    const https = config.tls ? { cert: await readFile(config.tls.certFile), key: await readFile(config.tls.keyFile) } : null;
    const { app } = await buildHttpApp({
      authenticate: (token) => apiKeys.authenticate(token),
      uploads,
      tasks,
      certificates,
      apps,
      distributions,
      developerAccounts,
      enrollments,
      linkKey: db.secretBox.deriveKey('install-link-tokens'),
      ready: async () => {
        // A round trip, not a table read: probes come every few seconds.
        await sql`select 1`.execute(db.kysely);
        await store.exists('readyz/probe');
        return { database: 'ok', storage: 'ok' };
      },
      get baseUrl() {
        return base.url;
      },
      maxUploadBytes: config.maxUploadBytes,
      // Unfinished resumable uploads live as long as a file_key would.
      resumable: () => openResumableStore(config, overrides.resumable?.expirationMs ?? config.fileKeyTtlSeconds * 1000),
      ...(overrides.resumable?.sweepIntervalMs ? { resumableSweepMs: overrides.resumable.sweepIntervalMs } : {}),
      rateLimit: config.rateLimit,
      publicRateLimit: config.publicRateLimit,
      passwordAttempts: config.passwordAttempts,
      connectionLimits: config.limits,
      trustProxy: config.trustProxy,
      metrics: { metrics, token: config.metricsToken },
      logger,
      https,
      console: consoleDeps,
    });
    appLog = app.log;

    if (config.workerConcurrency > 0) {
      const deviceFlow = new DeviceFlow({
        db,
        blobs,
        accounts: developerAccounts,
        signer: deviceSigner,
        workDir: path.join(ownScratch.dir, 'super'),
        logger: app.log,
      });
      const taskWorker = new TaskWorker({
        db,
        queue,
        blobs,
        signers: [
          ...(overrides.signers ?? productionSigners((pool = new SignerPool({ threads: config.workerConcurrency })))),
          // In-process: it calls App Store Connect and reads developer accounts from the database.
          new SuperTaskSigner({ db, accounts: developerAccounts, engine: deviceSigner }),
        ],
        tasks,
        uploads,
        webhooks,
        scratch: ownScratch,
        onSucceeded: (task) => distributions.publish(task),
        onSigned: (task, seconds, outcome) => metrics.signingDuration.observe({ platform: task.platform, cert_type: task.cert_type, outcome }, seconds),
        logger: app.log,
      });
      worker = queue.start({
        handlers: {
          ...taskWorker.handlers(),
          super_device: (payload, context) => deviceFlow.run(payload.enrollmentId, context),
        },
        concurrency: config.workerConcurrency,
        onExhausted: (job) => taskWorker.onExhausted(job),
        onError: (error) => app.log.error({ err: error }, 'job queue error'),
      });
      stopSweeper = taskWorker.startSweeper();
    }

    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    base.url = baseUrlFor(port);
    if (profileSigner === null) {
      app.log.warn('UDID-capture profiles are served unsigned (iOS shows "Not Signed"): set SIGNET_PROFILE_SIGNING_CERT and SIGNET_PROFILE_SIGNING_KEY, or SIGNET_TLS_CERT and SIGNET_TLS_KEY');
    }
    if (!base.url.startsWith('https://')) {
      // iOS refuses itms-services installs over plain HTTP (distribution-protocols.md §1.3).
      app.log.warn(
        { public_url: base.url },
        'iOS install links need HTTPS: set SIGNET_PUBLIC_URL to the https:// address of a TLS reverse proxy, or SIGNET_TLS_CERT and SIGNET_TLS_KEY',
      );
    }
    if (setupToken !== null) {
      const link = `${base.url}/setup?token=${setupToken}`;
      (overrides.onSetupLink ?? ((url) => process.stderr.write(`\nSignet has no users yet. Open this one-time link to create the owner (valid for 24 hours):\n\n  ${url}\n\nHeadless install instead: signet users create --email you@example.com --account default --password-stdin\n\n`)))(link);
    }
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        // HTTP first (uploads are aborted by the app's preClose hook), then the worker hands
        // running tasks back, then the connections go.
        await app.close();
        await stopSweeper();
        await worker?.stop();
        await pool?.close();
        await releaseReader.close();
        await keystores.close();
        await jobs.close();
        clearInterval(leftovers ?? undefined);
        await store.close();
        await ownScratch.close();
        await db.close();
      })());
    return { app, url, db, queue: jobs, blobs: store, close };
  } catch (error) {
    await stopSweeper();
    await worker?.stop().catch(() => {});
    await pool?.close().catch(() => {});
    await releaseReader.close().catch(() => {});
    await keystores.close().catch(() => {});
    await queue?.close().catch(() => {});
    clearInterval(leftovers ?? undefined);
    await blobs?.close().catch(() => {});
    await scratch?.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }
}
