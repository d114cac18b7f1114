// The per-device work behind a captured UDID (job `super_device`): choose an account (pool), make
// sure the app's App IDs exist there with their capabilities (app-ids.ts; before the device
// takes a slot, so an account whose team cannot have the App IDs costs nothing), register the
// device at Apple, make sure the app's ad-hoc profiles (one per developer account and App ID,
// each holding every enabled device of the account; the app's and its extensions' made together
// as one group) include it, then make or reuse the signed build for (task, profile group). Runs
// on the job queue, never inside the device's POST, which must answer at once
// (distribution-protocols.md §3.4 item 3).
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
import type { DeveloperAppIdRow } from '../db/profile-tables.ts';
import type { DeveloperAccountRow, DeveloperDeviceRow, EnrollmentRow, SuperBuildRow, SuperProfileRow } from '../db/super-tables.ts';
import { AppError, errorCodeOf, ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';
import type { JobContext } from '../queue/job-queue.ts';
import { withBlobSource, type BlobStore } from '../storage/blob-store.ts';
import { assertBlobKey } from '../storage/blob-keys.ts';
import type { DeveloperAccountService } from '../services/developer-accounts.ts';
import type { Logger } from '../services/logger.ts';
import { AccountPool } from './account-pool.ts';
import { AppIdRegistry } from './app-ids.ts';
import { appIdsOf, LEGACY_WILDCARD_PLAN, type SuperAppPlan } from './capability-plan.ts';
import { SUPER_APP_ID } from './constants.ts';
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
  readonly #appIds: AppIdRegistry;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(options: DeviceFlowOptions) {
    this.#options = options;
    this.#pool = new AccountPool({ db: options.db, accounts: options.accounts });
    this.#appIds = new AppIdRegistry(options.db);
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

      const planJson = await db.repos.superSignature.findPlan(task.id);
      const plan = planJson === null ? LEGACY_WILDCARD_PLAN : (JSON.parse(planJson) as SuperAppPlan);
      const { profiles, chosen } = await this.#registerAndProvision(enrollment, task, plan);
      account = chosen;
      await db.repos.superSignature.updateEnrollment(enrollment.id, { state: 'signing', developerAccountId: account.id });
      const build = await this.#build(task, account, plan, profiles, context?.signal);
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

  async #registerAndProvision(enrollment: EnrollmentRow, task: TaskRow, plan: SuperAppPlan): Promise<{ profiles: SuperProfileRow[]; chosen: DeveloperAccountRow }> {
    const exclude = new Set<string>();
    const udid = enrollment.udid!;
    // Accounts already known to be unable to have the app's App IDs (another team owns one).
    for (const account of await this.#options.db.repos.developerAccounts.list(task.account_id)) {
      if (await this.#appIds.knownUnavailable(account, plan)) exclude.add(account.id);
    }
    let unavailable: unknown = null;
    for (;;) {
      let choice;
      try {
        choice = await this.#pool.choose({
          tenantId: task.account_id,
          udid,
          deviceClass: deviceClassOf(enrollment),
          bundleIdentifier: appIdsOf(plan)[0] ?? SUPER_APP_ID,
          deviceName: enrollment.device_name,
          exclude,
        });
      } catch (error) {
        // No account left: when some were passed over for the App IDs, that is the reason to give.
        throw unavailable ?? error;
      }
      try {
        const profiles = await this.#withAccount(choice.account.id, async () => {
          const api = this.#options.accounts.client(choice.account);
          const appIds = await this.#appIds.ensure(api, choice.account, plan);
          const device = await this.#register(api, choice.device, enrollment);
          return this.#ensureProfiles(api, choice.account, plan, appIds, device);
        });
        return { profiles, chosen: choice.account };
      } catch (error) {
        const code = errorCodeOf(error);
        // Apple counted more devices than we did (added in the portal): resync, try another account.
        if (code === 'device_slots_exhausted') {
          await this.#options.accounts.refresh(choice.account).catch(() => null);
          exclude.add(choice.account.id);
          continue;
        }
        // Another team owns an App ID of the app: this account cannot host it; the slot just
        // reserved for the device was never used at Apple, so it is given back.
        if (code === 'bundle_id_unavailable') {
          if (choice.reserved) await this.#options.db.repos.developerAccounts.releaseReservation(choice.device.id);
          exclude.add(choice.account.id);
          unavailable = error;
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

  /**
   * The app's current profiles (one per App ID, app first) if they already provision the device
   * and grant the App IDs' current capabilities, else a new group replacing them. A group is made
   * and replaced as a whole, so a build always takes profiles listing the same devices.
   */
  async #ensureProfiles(api: AppStoreConnect, account: DeveloperAccountRow, plan: SuperAppPlan, appIds: DeveloperAppIdRow[], device: DeveloperDeviceRow): Promise<SuperProfileRow[]> {
    const repos = this.#options.db.repos;
    const current = await Promise.all(appIds.map((a) => repos.superSignature.currentProfile(account.id, a.identifier)));
    const group = (p: SuperProfileRow) => p.group_id ?? p.id;
    const usable = (p: SuperProfileRow | null, i: number): p is SuperProfileRow =>
      p !== null &&
      group(p) === group(current[0]!) &&
      (JSON.parse(p.udids_json) as string[]).includes(device.udid) &&
      Date.parse(p.expires_at) > Date.now() + 86_400_000 &&
      // A capability enabled since the profile was made is not in it yet.
      (appIds[i]!.capabilities_changed_at === null || p.created_at >= appIds[i]!.capabilities_changed_at!);
    if (current[0] && current.every(usable)) return current as SuperProfileRow[];

    // Profile names are unique per team and profiles cannot be edited: a new, versioned name each
    // time, created before the old profile is deleted (§3.2.3).
    const stamp = `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(2).toString('hex')}`;
    const create = async () => {
      const devices = await repos.developerAccounts.enabledDevices(account.id);
      const made = [];
      for (const appId of appIds) {
        const name = `Signet ${appId.identifier === SUPER_APP_ID ? 'wildcard' : appId.identifier} ${stamp}`;
        made.push({ appId, name, created: await api.createAdHocProfile({ name, bundleIdId: appId.asc_bundle_id!, certificateIds: [account.asc_certificate_id], deviceIds: devices.map((d) => d.asc_device_id!) }) });
      }
      return { made, devices };
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
    const rows: SuperProfileRow[] = [];
    for (const { appId, name, created } of result.made) {
      rows.push(
        await repos.superSignature.insertProfile({
          developerAccountId: account.id,
          bundleIdentifier: appId.identifier,
          ascBundleId: appId.asc_bundle_id!,
          ascProfileId: created.id,
          uuid: created.uuid,
          name,
          content: created.content,
          udids: result.devices.map((d) => d.udid),
          expiresAt: created.expirationDate ?? new Date(Date.now() + 365 * 86_400_000),
          groupId: rows[0]?.id ?? null,
        }),
      );
    }
    // Builds made with replaced profiles keep working on their devices; Apple's copies can go.
    // (Older ones include profiles another process made concurrently for this account.)
    for (const row of rows) {
      for (const replaced of await repos.superSignature.supersedeOlderProfiles(row)) {
        await api.deleteProfile(replaced.asc_profile_id).catch((error: unknown) => this.#options.logger.warn({ err: error, profile: replaced.asc_profile_id }, 'deleting a replaced profile failed'));
      }
    }
    return rows;
  }

  /** The signed build of (task, profile group): made here, or awaited when another run is making it. */
  async #build(task: TaskRow, account: DeveloperAccountRow, plan: SuperAppPlan, profiles: SuperProfileRow[], signal?: AbortSignal): Promise<SuperBuildRow> {
    const repo = this.#options.db.repos.superSignature;
    const staleMs = this.#options.staleBuildMs ?? 10 * 60_000;
    // The group's first profile (the app's) names the build; the others were made with it.
    const key = profiles[0]!;
    for (;;) {
      const { build, created } = await repo.claimBuild(task.id, key.id);
      if (build.state === 'ready') return build;
      if (created || (build.state === 'failed' && (await repo.retryBuild(build.id))) || Date.parse(build.updated_at) < Date.now() - staleMs) {
        return this.#sign(task, account, plan, profiles, build, signal);
      }
      if (build.state === 'failed') {
        const code = build.error_code !== null && build.error_code in ERROR_CATALOGUE ? (build.error_code as ErrorCode) : 'signing_failed';
        throw new AppError(code, build.error_message ?? undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      signal?.throwIfAborted();
    }
  }

  async #sign(task: TaskRow, account: DeveloperAccountRow, plan: SuperAppPlan, profiles: SuperProfileRow[], build: SuperBuildRow, signal?: AbortSignal): Promise<SuperBuildRow> {
    const { db, blobs, signer } = this.#options;
    const contents = profiles.map((p) => Buffer.from(p.content_b64, 'base64'));
    try {
      // Fast path: the shared part of (task, account) plus this profile group's part (milliseconds).
      const incremental = await this.#incremental.build(task, account, plan, contents, build.id, signal);
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
    // Whole-app re-sign for these profiles (they change more than the prepared build allows).
    await fs.mkdir(this.#options.workDir, { recursive: true });
    const outputPath = path.join(this.#options.workDir, `${build.id}-${randomBytes(4).toString('hex')}.ipa`);
    const secrets = db.repos.developerAccounts.secrets(account);
    try {
      // The upload is read where it is stored; only the output is a local file (Mach-O rewriting
      // needs random access to it) until it is stored.
      await withBlobSource(blobs, task.input_blob_key, (input) =>
        signer.sign({
          input,
          outputPath,
          p12: secrets.p12,
          password: secrets.p12Password,
          profiles: contents,
          ...(signal ? { signal } : {}),
        }),
        signal ? { signal } : {},
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
