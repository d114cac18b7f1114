// The per-device work behind a captured UDID (job `super_device`): choose an account (pool),
// register the device at Apple, make sure the bucket's ad-hoc profile (one per developer account
// and bundle id, holding every enabled device of the account) includes it, then make or reuse the
// signed build for (task, profile). Runs on the job queue, never inside the device's POST, which
// must answer at once (distribution-protocols.md §3.4 item 3).
//
// Apple steps of one account run one at a time (an in-process lock per account): device
// registration and profile replacement are read-modify-write sequences at Apple, and the
// API serialises one key anyway. Concurrent devices of one account therefore share profiles:
// the second finds itself already in the profile the first one made. Across processes (several
// workers on PostgreSQL) the slot reservation is transactional, a duplicate registration is
// found by the "already exists" rule, and of two profiles made at once the newer replaces the
// older; the cost of a race is one redundant profile, never a wasted slot.
import { randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { AppStoreConnect } from '../apple/app-store-connect.ts';
import { deviceClassForProduct } from '../apple/udid.ts';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import type { DeveloperAccountRow, DeveloperDeviceRow, EnrollmentRow, SuperBuildRow, SuperProfileRow } from '../db/super-tables.ts';
import { AppError, errorCodeOf, ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';
import type { JobContext } from '../queue/job-queue.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { assertBlobKey } from '../storage/blob-keys.ts';
import type { DeveloperAccountService } from '../services/developer-accounts.ts';
import type { Logger } from '../services/logger.ts';
import { AccountPool } from './account-pool.ts';
import { SUPER_APP_ID, SUPER_APP_ID_NAME } from './constants.ts';
import type { DeviceBuildSigner } from './device-signer.ts';
import { IncrementalBuilds } from './incremental-builds.ts';

export interface DeviceFlowOptions {
  db: Db;
  blobs: BlobStore;
  accounts: DeveloperAccountService;
  signer: DeviceBuildSigner;
  workDir: string;
  logger: Logger;
  /** How long a build claimed by another run may stay `signing` before this run takes it over. */
  staleBuildMs?: number;
}

const FINISHED = new Set(['ready', 'failed']);

export class DeviceFlow {
  readonly #options: DeviceFlowOptions;
  readonly #pool: AccountPool;
  readonly #incremental: IncrementalBuilds;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(options: DeviceFlowOptions) {
    this.#options = options;
    this.#pool = new AccountPool({ db: options.db, accounts: options.accounts });
    this.#incremental = new IncrementalBuilds({ db: options.db, blobs: options.blobs, engine: options.signer, workDir: options.workDir, logger: options.logger });
  }

  /** The `super_device` job handler. Failures end the enrollment with a catalogue code. */
  async run(enrollmentId: string, context?: Pick<JobContext, 'signal'>): Promise<void> {
    const { db, logger } = this.#options;
    const enrollment = await db.repos.superSignature.findEnrollment(enrollmentId);
    if (!enrollment || FINISHED.has(enrollment.state) || enrollment.udid === null) return;
    let account: DeveloperAccountRow | null = null;
    try {
      const distribution = await db.repos.superSignature.findDistribution(enrollment.distribution_id);
      const task = distribution ? await db.repos.tasks.find(distribution.account_id, distribution.task_id) : null;
      if (!distribution || !task || task.status !== 'succeeded') throw new AppError('distribution_not_found', 'The release behind this install link is gone.');
      await db.repos.superSignature.updateEnrollment(enrollment.id, { state: 'registering' });

      const { profile, chosen } = await this.#registerAndProvision(enrollment, task, SUPER_APP_ID);
      account = chosen;
      await db.repos.superSignature.updateEnrollment(enrollment.id, { state: 'signing', developerAccountId: account.id });
      const build = await this.#build(task, account, profile, context?.signal);
      await db.repos.superSignature.updateEnrollment(enrollment.id, { state: 'ready', buildId: build.id, error: null });
      logger.info({ enrollment_id: enrollment.id, developer_account_id: account.id, build_id: build.id }, 'device build ready');
    } catch (error) {
      if (context?.signal.aborted) throw error; // worker stopping: the job runs again later
      const code = errorCodeOf(error) ?? 'internal_error';
      const message = code === 'internal_error' ? ERROR_CATALOGUE.internal_error : (error as Error).message;
      if (code === 'internal_error') logger.error({ err: error, enrollment_id: enrollment.id }, 'device flow crashed');
      else logger.info({ enrollment_id: enrollment.id, error_code: code }, 'device flow failed');
      if (account) await this.#options.accounts.recordFailure(account, error).catch(() => null);
      await db.repos.superSignature.updateEnrollment(enrollment.id, { state: 'failed', error: { code, message } });
    }
  }

  async #registerAndProvision(enrollment: EnrollmentRow, task: TaskRow, bundleIdentifier: string): Promise<{ profile: SuperProfileRow; chosen: DeveloperAccountRow }> {
    const exclude = new Set<string>();
    const udid = enrollment.udid!;
    for (;;) {
      const choice = await this.#pool.choose({
        tenantId: task.account_id,
        udid,
        deviceClass: deviceClassOf(enrollment),
        bundleIdentifier,
        deviceName: enrollment.device_name,
        exclude,
      });
      try {
        const profile = await this.#withAccount(choice.account.id, async () => {
          const api = this.#options.accounts.client(choice.account);
          const device = await this.#register(api, choice.device, enrollment);
          return this.#ensureProfile(api, choice.account, bundleIdentifier, task, device);
        });
        return { profile, chosen: choice.account };
      } catch (error) {
        const code = errorCodeOf(error);
        // Apple counted more devices than we did (added in the portal): resync, try another account.
        if (code === 'device_slots_exhausted') {
          await this.#options.accounts.refresh(choice.account).catch(() => null);
          exclude.add(choice.account.id);
          continue;
        }
        await this.#options.accounts.recordFailure(choice.account, error).catch(() => null);
        throw error;
      }
    }
  }

  /** Registers the device at Apple (idempotent) and records Apple's answer on its slot. */
  async #register(api: AppStoreConnect, slot: DeveloperDeviceRow, enrollment: EnrollmentRow): Promise<DeveloperDeviceRow> {
    const repo = this.#options.db.repos.developerAccounts;
    let current = (await repo.findDevice(slot.developer_account_id, slot.udid)) ?? slot;
    if (current.status !== 'ENABLED' || current.asc_device_id === null) {
      const name = `${enrollment.product ?? 'iOS'} ${current.udid.slice(-6)}`.slice(0, 50);
      let registered;
      try {
        registered = await api.registerDevice({ udid: current.udid, name });
      } catch (error) {
        const code = errorCodeOf(error);
        // Refused before consuming a slot at Apple: give our reservation back.
        if (current.status === 'reserved' && (code === 'device_udid_invalid' || code === 'device_slots_exhausted')) await repo.releaseReservation(current.id);
        throw error;
      }
      current = (await repo.updateDevice(current.id, { status: registered.device.status, ascDeviceId: registered.device.id, deviceClass: registered.device.deviceClass })) ?? current;
    }
    if (current.status === 'PROCESSING') throw new AppError('device_pending_review', 'Apple is reviewing this device (status PROCESSING); it can be provisioned once Apple enables it.');
    if (current.status === 'INELIGIBLE') throw new AppError('device_ineligible', 'Apple marked this device INELIGIBLE for this developer account.');
    if (current.status !== 'ENABLED') throw new AppError('device_ineligible', `Apple reports this device as ${current.status}.`);
    return current;
  }

  /** The bucket's current profile if it already provisions the device, else a new one replacing it. */
  async #ensureProfile(api: AppStoreConnect, account: DeveloperAccountRow, bundleIdentifier: string, task: TaskRow, device: DeveloperDeviceRow): Promise<SuperProfileRow> {
    const repos = this.#options.db.repos;
    const current = await repos.superSignature.currentProfile(account.id, bundleIdentifier);
    if (current && (JSON.parse(current.udids_json) as string[]).includes(device.udid) && Date.parse(current.expires_at) > Date.now() + 86_400_000) return current;

    const cached = (JSON.parse(account.bundle_ids_json) as Array<{ id: string; identifier: string }>).find((b) => b.identifier === bundleIdentifier);
    const bundle = cached ?? (await api.ensureBundleId(bundleIdentifier, SUPER_APP_ID_NAME));
    if (!cached) {
      const fresh = await repos.developerAccounts.findById(account.id);
      const known = JSON.parse(fresh?.bundle_ids_json ?? '[]') as Array<{ id: string; identifier: string }>;
      await repos.developerAccounts.setBundleIds(account.id, [...known.filter((b) => b.identifier !== bundle.identifier), { id: bundle.id, identifier: bundle.identifier }]);
    }
    // Profile names are unique per team and profiles cannot be edited: a new, versioned name each
    // time, created before the old profile is deleted (§3.2.3).
    const name = `Signet ${bundleIdentifier === SUPER_APP_ID ? 'wildcard' : bundleIdentifier} ${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(2).toString('hex')}`;
    const create = async () => {
      const devices = await repos.developerAccounts.enabledDevices(account.id);
      const created = await api.createAdHocProfile({ name, bundleIdId: bundle.id, certificateIds: [account.asc_certificate_id], deviceIds: devices.map((d) => d.asc_device_id!) });
      return { created, devices };
    };
    let result;
    try {
      result = await create();
    } catch (error) {
      // A device was disabled or removed in the portal since the last sync: resync, retry once.
      if ((error as AppError).details?.condition !== 'devices_not_current') throw error;
      await this.#options.accounts.refresh(account);
      result = await create();
    }
    const { created, devices } = result;
    const row = await repos.superSignature.insertProfile({
      developerAccountId: account.id,
      bundleIdentifier,
      ascBundleId: bundle.id,
      ascProfileId: created.id,
      uuid: created.uuid,
      name,
      content: created.content,
      udids: devices.map((d) => d.udid),
      expiresAt: created.expirationDate ?? new Date(Date.now() + 365 * 86_400_000),
    });
    // Builds made with replaced profiles keep working on their devices; Apple's copies can go.
    // (Older ones include profiles another process made concurrently for this account.)
    for (const replaced of await repos.superSignature.supersedeOlderProfiles(row)) {
      await api.deleteProfile(replaced.asc_profile_id).catch((error: unknown) => this.#options.logger.warn({ err: error, profile: replaced.asc_profile_id }, 'deleting a replaced profile failed'));
    }
    return row;
  }

  /** The signed build of (task, profile): made here, or awaited when another run is making it. */
  async #build(task: TaskRow, account: DeveloperAccountRow, profile: SuperProfileRow, signal?: AbortSignal): Promise<SuperBuildRow> {
    const repo = this.#options.db.repos.superSignature;
    const staleMs = this.#options.staleBuildMs ?? 10 * 60_000;
    for (;;) {
      const { build, created } = await repo.claimBuild(task.id, profile.id);
      if (build.state === 'ready') return build;
      if (created || (build.state === 'failed' && (await repo.retryBuild(build.id))) || Date.parse(build.updated_at) < Date.now() - staleMs) {
        return this.#sign(task, account, profile, build, signal);
      }
      if (build.state === 'failed') {
        const code = build.error_code !== null && build.error_code in ERROR_CATALOGUE ? (build.error_code as ErrorCode) : 'signing_failed';
        throw new AppError(code, build.error_message ?? undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      signal?.throwIfAborted();
    }
  }

  async #sign(task: TaskRow, account: DeveloperAccountRow, profile: SuperProfileRow, build: SuperBuildRow, signal?: AbortSignal): Promise<SuperBuildRow> {
    const { db, blobs, signer } = this.#options;
    try {
      // Fast path: the shared part of (task, account) plus this profile's part (milliseconds).
      const incremental = await this.#incremental.build(task, account, profile, build.id, signal);
      if (incremental) {
        return (await db.repos.superSignature.finishBuild(build.id, {
          state: 'ready',
          artifact: { blobKey: incremental.partKey, size: incremental.size, sha256: incremental.sha256, shared: { blobKey: incremental.sharedKey, size: incremental.sharedSize } },
        }))!;
      }
    } catch (error) {
      const code = errorCodeOf(error) ?? 'signing_failed';
      await db.repos.superSignature.finishBuild(build.id, { state: 'failed', error: { code, message: error instanceof Error ? error.message : String(error) } });
      throw error;
    }
    // Whole-app re-sign for this profile (the profile changes more than the prepared build allows).
    await fs.mkdir(this.#options.workDir, { recursive: true });
    const outputPath = path.join(this.#options.workDir, `${build.id}-${randomBytes(4).toString('hex')}.ipa`);
    const secrets = db.repos.developerAccounts.secrets(account);
    try {
      await blobs.withLocalFile(task.input_blob_key, (inputPath) =>
        signer.sign({
          inputPath,
          outputPath,
          p12: secrets.p12,
          password: secrets.p12Password,
          profile: Buffer.from(profile.content_b64, 'base64'),
          ...(signal ? { signal } : {}),
        }),
      );
      const key = assertBlobKey(`super/${task.id}/${build.id}.ipa`);
      const stored = await blobs.put(key, createReadStream(outputPath));
      return (await db.repos.superSignature.finishBuild(build.id, { state: 'ready', artifact: { blobKey: key, size: stored.size, sha256: stored.sha256 } }))!;
    } catch (error) {
      const code = errorCodeOf(error) ?? 'signing_failed';
      await db.repos.superSignature.finishBuild(build.id, { state: 'failed', error: { code, message: error instanceof Error ? error.message : String(error) } });
      throw error;
    } finally {
      await fs.rm(outputPath, { force: true });
    }
  }

  async #withAccount<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(accountId) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.#locks.set(accountId, tail);
    try {
      return await run;
    } finally {
      if (this.#locks.get(accountId) === tail) this.#locks.delete(accountId);
    }
  }
}

/** The class whose slot the device will use; Apple's answer corrects it after registration. */
function deviceClassOf(enrollment: EnrollmentRow): string {
  return deviceClassForProduct(enrollment.product) ?? 'IPHONE';
}
