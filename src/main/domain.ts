// What the API process and the worker share: config → database → blob store → job queue →
// domain services. Opened once per process by src/main/service.ts, then handed to the API
// (api.ts) and/or the worker (worker.ts). Nothing here listens or runs jobs.
import path from 'node:path';
import { ConfigError, publicBaseUrl, type Config } from '../config.ts';
import { openDatabase, type Db } from '../db/database.ts';
import { ReleaseReader } from '../distribution/release-reader.ts';
import { DistributionService } from '../distribution/service.ts';
import { taskView } from '../http/views.ts';
import { openJobQueue, type QueueTuning } from '../queue/open-job-queue.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { inspectPackage } from '../signing/inspect/index.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { openBlobStore } from '../storage/open-blob-store.ts';
import { ProcessScratch, sweepDeadOwners } from '../storage/scratch.ts';
import { ApiKeyService } from '../services/api-keys.ts';
import { AppService } from '../services/apps.ts';
import { CertificateService, type ProfileReader } from '../services/certificates.ts';
import { DeveloperAccountService } from '../services/developer-accounts.ts';
import { AccountEventService } from '../services/account-events.ts';
import { KeystoreReader } from '../services/keystore-reader.ts';
import { LifecycleMonitor } from '../services/lifecycle-monitor.ts';
import type { Logger } from '../services/logger.ts';
import { RevocationService } from '../services/revocation.ts';
import { RotationService } from '../services/rotations.ts';
import { Metrics } from '../services/metrics.ts';
import { OutboundAllowList, type OutboundOptions } from '../services/outbound.ts';
import { TaskService } from '../services/tasks.ts';
import { UploadService, type PackageInspector } from '../services/uploads.ts';
import { WebhookService } from '../services/webhooks.ts';
import type { DeviceBuildSigner } from '../super-signature/device-signer.ts';
import { EnrollmentService } from '../super-signature/enrollment.ts';
import type { ProfileSigner } from '../super-signature/profile-signer.ts';
import { resigningDeviceSigner } from '../super-signature/resigning-device-signer.ts';
import { bundledAppleCertificates } from '../signing/cms/apple-ca/index.ts';
import { readCaDirectory } from '../signing/cms/ca-directory.ts';
import type { SigningSettings } from '../signing/pipeline/types.ts';
import { productionProfileReader } from './signers.ts';

export interface DomainOverrides {
  queueTuning?: QueueTuning;
  /** Super signature engines and App Store Connect client tuning (tests). */
  superSignature?: { deviceSigner?: DeviceBuildSigner; ascOptions?: { baseDelayMs?: number; maxRetries?: number } };
}

export interface Domain {
  config: Config;
  db: Db;
  blobs: BlobStore;
  queue: JobQueue;
  scratch: ProcessScratch;
  /** The public base URL; the API sets the real one once it listens (config.port may be 0). */
  base: { url: string };
  outbound: OutboundOptions;
  metrics: Metrics;
  apiKeys: ApiKeyService;
  keystores: KeystoreReader;
  releaseReader: ReleaseReader;
  uploads: UploadService;
  tasks: TaskService;
  certificates: CertificateService;
  webhooks: WebhookService;
  distributions: DistributionService;
  apps: AppService;
  developerAccounts: DeveloperAccountService;
  enrollments: EnrollmentService;
  /** What every signing path is configured with (CA certificates beside Apple's). */
  signingSettings: SigningSettings;
  deviceSigner: DeviceBuildSigner;
  profileSigner: ProfileSigner | null;
  /** Account events (alerts) and account webhooks. */
  events: AccountEventService;
  /** Certificate and developer-account health; the worker runs its periodic check. */
  lifecycle: LifecycleMonitor;
  rotations: RotationService;
  /** Services built before a logger exists log through this; the API or the worker attaches theirs. */
  log: Logger;
  attachLogger(logger: Logger): void;
  close(): Promise<void>;
}

const inspectSource: PackageInspector = async (source) => {
  const info = await inspectPackage(source, { iconBytes: false });
  return { platform: info.platform, bundleId: info.bundleId, name: info.name, version: info.version, build: info.build };
};

export async function openDomain(config: Config, overrides: DomainOverrides = {}): Promise<Domain> {
  const db = await openDatabase(config);
  let blobs: BlobStore | null = null;
  let queue: JobQueue | null = null;
  let scratch: ProcessScratch | null = null;
  let leftovers: NodeJS.Timeout | null = null;
  const releaseReader = new ReleaseReader();
  const keystores = new KeystoreReader();
  const closeAll = async () => {
    await releaseReader.close().catch(() => {});
    await keystores.close().catch(() => {});
    await queue?.close().catch(() => {});
    clearInterval(leftovers ?? undefined);
    await blobs?.close().catch(() => {});
    await scratch?.close().catch(() => {});
    await db.close().catch(() => {});
  };
  try {
    // Temp files: what dead processes left goes first (whatever its age), then this process takes
    // its own folder; a periodic sweep catches processes that die later (several workers may share
    // a data dir).
    const tmpRoot = path.join(config.dataDir, 'tmp');
    await sweepDeadOwners(tmpRoot);
    const ownScratch = (scratch = await ProcessScratch.open(tmpRoot));
    const store = (blobs = await openBlobStore(config));
    leftovers = setInterval(() => {
      Promise.all([sweepDeadOwners(tmpRoot), store.sweepLeftovers()]).catch(() => {});
    }, 10 * 60_000).unref();
    const jobs = (queue = await openJobQueue(db, config.databaseUrl, overrides.queueTuning));
    let outbound: OutboundOptions;
    try {
      outbound = { allow: new OutboundAllowList(config.outboundAllow) };
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
    const metrics = new Metrics({ taskCounts: () => db.repos.tasks.countByStatus() });
    // The base URL is known once the port is; services read it lazily through this holder.
    const base = { url: publicBaseUrl(config) };
    const profileReader: ProfileReader | null = productionProfileReader();
    let logTarget: Logger | null = null;
    const log: Logger = {
      debug: (o, m) => logTarget?.debug(o, m),
      info: (o, m) => logTarget?.info(o, m),
      warn: (o, m) => logTarget?.warn(o, m),
      error: (o, m) => logTarget?.error(o, m),
    };
    // Signing settings shared by every path (pool threads, per-device builds): SIGNET_APPLE_CA_DIR's
    // certificates, read once, beside the Apple CAs shipped with Signet.
    const signingSettings: SigningSettings = { caCertificates: config.appleCaDir === null ? [] : await readCaDirectory(config.appleCaDir).catch((cause: unknown) => {
      throw new ConfigError(`SIGNET_APPLE_CA_DIR (${config.appleCaDir}) cannot be read: ${(cause as Error).message}`);
    }) };
    // Revocation (OCSP) of signing certificates: asked at upload and by the worker's periodic
    // check. Issuers are looked for in the keystore's chain, then Apple's CAs and the CA dir.
    // Read on the first check, not at start (eleven files most starts never need).
    let issuerCandidates: Buffer[] | null = null;
    const revocation = new RevocationService({
      db,
      outbound,
      timeoutMs: config.lifecycle.ocspTimeoutMs,
      recheckMs: config.lifecycle.checkIntervalSeconds * 1000,
      caCertificates: async () => (issuerCandidates ??= [...bundledAppleCertificates(), ...(signingSettings.caCertificates ?? []).map((c) => Buffer.from(c))]),
    });
    const uploads = new UploadService({
      db,
      blobs: store,
      inspect: inspectSource,
      maxUploadBytes: config.maxUploadBytes,
      fileKeyTtlSeconds: config.fileKeyTtlSeconds,
      keepLiveInputs: config.keepLiveInputs,
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
        return { certificate: identity.certificate, chain: identity.chain, subject: info.subject, serial: info.serialNumber, teamId: info.teamId ?? null, notAfter: info.notAfter };
      },
      ...(overrides.superSignature?.ascOptions ? { ascOptions: overrides.superSignature.ascOptions } : {}),
      revocation,
      expiringDays: config.lifecycle.expiringDays,
      onHealthRecorded: async (row) => {
        await lifecycle.checkDeveloperAccount(row);
      },
    });
    const deviceSigner = overrides.superSignature?.deviceSigner ?? resigningDeviceSigner({ settings: signingSettings, loadIdentity: (p12, options) => keystores.loadIdentity(p12, options) });
    // UDID-capture profiles are signed with SIGNET_PROFILE_SIGNING_*, else the TLS pair, else not
    // at all; the CMS code loads only when there is something to sign with.
    const profileSigningFiles = config.profileSigning ?? config.tls;
    const profileSigner = profileSigningFiles === null ? null : await (await import('../super-signature/profile-signer.ts')).loadProfileSigner(profileSigningFiles);
    const enrollments = new EnrollmentService({
      db,
      queue: jobs,
      blobs: store,
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
      queue: jobs,
      blobs: store,
    });
    // Keystores are opened on threads (KeystoreReader), which load the readers (pkijs, node-forge)
    // on the first certificate upload, not at start: megabytes of code most processes never need.
    const certificates = new CertificateService({
      db,
      loadIdentity: (bytes, options) => keystores.loadIdentity(bytes, options),
      readProfile: profileReader,
      revocation,
      expiringDays: config.lifecycle.expiringDays,
      onCreated: async (row) => {
        await lifecycle.checkCertificate(row);
      },
    });
    // Account events (alerts) and account webhooks; the monitor records health and announces changes.
    const events = new AccountEventService({ db, queue: jobs, outbound });
    const lifecycle: LifecycleMonitor = new LifecycleMonitor({
      db,
      revocation,
      certificates,
      developerAccounts,
      events,
      loadIdentity: (bytes, options) => keystores.loadIdentity(bytes, options),
      logger: log,
      intervalMs: config.lifecycle.checkIntervalSeconds * 1000,
    });
    const webhooks = new WebhookService({
      db,
      outbound,
      onOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
      // A task event carries the task as the API shows it.
      taskBody: (task, deliveries, links) => taskView(task, base.url, deliveries, links),
      links: (task) => distributions.taskLinks(task),
    });
    const distributions = new DistributionService({
      db,
      onQuotaReached: async (distribution, downloads) => {
        await events
          .emit({
            accountId: distribution.account_id,
            type: 'distribution.quota_reached',
            subjectId: distribution.id,
            data: { distribution_id: distribution.id, task_id: distribution.task_id, app_id: distribution.app_id, url: `${base.url}/d/${distribution.slug}`, downloads, max_downloads: distribution.max_downloads },
          })
          .catch((error: unknown) => log.error({ err: error, distribution_id: distribution.id }, 'quota event not recorded'));
      },
      blobs: store,
      get baseUrl() {
        return base.url;
      },
      readFacts: async (key) => {
        const source = await store.openSource(key);
        try {
          return await releaseReader.read(source);
        } finally {
          await source.close();
        }
      },
    });
    const apps = new AppService({ db, tasks, distributions });
    const rotations = new RotationService({ db, tasks, distributions, blobs: store });
    return {
      config,
      db,
      blobs: store,
      queue: jobs,
      scratch: ownScratch,
      base,
      outbound,
      metrics,
      apiKeys: new ApiKeyService(db.repos),
      keystores,
      releaseReader,
      uploads,
      tasks,
      certificates,
      webhooks,
      distributions,
      apps,
      developerAccounts,
      enrollments,
      signingSettings,
      deviceSigner,
      profileSigner,
      events,
      lifecycle,
      rotations,
      log,
      attachLogger: (logger) => {
        logTarget = logger;
      },
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
