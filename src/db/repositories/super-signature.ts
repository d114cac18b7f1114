// Super-signature state besides accounts and devices: device enrollments (UDID-capture visits),
// the ad-hoc profiles Signet created at Apple, and the per-(task, profile) signed builds.
import type { Kysely } from 'kysely';
import type { DistributionRow } from '../distribution-tables.ts';
import type { Database } from '../schema.ts';
import type { EnrollmentRow, EnrollmentState, SuperBuildRow, SuperBuildState, SuperProfileRow, SuperTemplateRow } from '../super-tables.ts';
import { superId } from './developer-accounts.ts';
import { nowIso } from './pagination.ts';

export interface EnrollmentPatch {
  state?: EnrollmentState;
  udid?: string;
  product?: string | null;
  osVersion?: string | null;
  deviceName?: string | null;
  developerAccountId?: string | null;
  buildId?: string | null;
  error?: { code: string; message: string } | null;
}

export interface NewSuperProfile {
  developerAccountId: string;
  bundleIdentifier: string;
  ascBundleId: string;
  ascProfileId: string;
  uuid: string;
  name: string;
  content: Buffer;
  udids: string[];
  expiresAt: Date;
  /** The group's first profile (the app's); absent for the first of a group or a lone profile. */
  groupId?: string | null;
}

export interface SuperSignatureRepository {
  createEnrollment(input: { distributionId: string; challengeHash: string; expiresAt: Date }): Promise<EnrollmentRow>;
  findEnrollment(id: string): Promise<EnrollmentRow | null>;
  findEnrollmentByChallenge(challengeHash: string): Promise<EnrollmentRow | null>;
  /**
   * Moves an enrollment on; with `from`, only when it is currently in one of those states
   * (compare-and-set, so a replayed device POST cannot restart finished work). Null when refused.
   */
  updateEnrollment(id: string, patch: EnrollmentPatch, from?: readonly EnrollmentState[]): Promise<EnrollmentRow | null>;
  /** The newest profile of (developer account, bundle identifier) not yet replaced. */
  currentProfile(developerAccountId: string, bundleIdentifier: string): Promise<SuperProfileRow | null>;
  insertProfile(input: NewSuperProfile): Promise<SuperProfileRow>;
  /**
   * Marks every current profile of the bucket created before `profile` as replaced and returns
   * them (processes racing on one account may each have made one; the newest wins).
   */
  supersedeOlderProfiles(profile: SuperProfileRow): Promise<SuperProfileRow[]>;
  findProfile(id: string): Promise<SuperProfileRow | null>;
  /** The profiles made together with `profile` for one app (itself included), oldest first. */
  profileGroup(profile: SuperProfileRow): Promise<SuperProfileRow[]>;
  /** Records a super task's App ID plan (JSON); the first one recorded wins. */
  savePlan(taskId: string, planJson: string): Promise<string>;
  /** The plan recorded for a task, or null (tasks signed before plans existed use the wildcard). */
  findPlan(taskId: string): Promise<string | null>;
  /** Profiles of a bucket replaced by newer ones (to delete at Apple). */
  supersededProfiles(developerAccountId: string): Promise<SuperProfileRow[]>;
  /**
   * The account's distribution certificate changed: every current profile names the old one, so
   * all are superseded (the next device request makes new ones) and the stored incremental
   * templates (signed with the old identity) are dropped. Returns the superseded profiles.
   */
  retireForNewCertificate(developerAccountId: string): Promise<SuperProfileRow[]>;
  /** The build for (task, profile), created in state `signing` when missing; `created` tells which. */
  claimBuild(taskId: string, profileId: string): Promise<{ build: SuperBuildRow; created: boolean }>;
  findBuild(id: string): Promise<SuperBuildRow | null>;
  finishBuild(
    id: string,
    outcome: { state: Exclude<SuperBuildState, 'signing'>; artifact?: { blobKey: string; size: number; sha256: string; shared?: { blobKey: string; size: number } }; error?: { code: string; message: string } },
  ): Promise<SuperBuildRow | null>;
  findTemplate(taskId: string, developerAccountId: string): Promise<SuperTemplateRow | null>;
  /** Records the shared blob of (task, account); an existing row wins (returned). */
  saveTemplate(input: { taskId: string; developerAccountId: string; sharedBlobKey: string; sharedSize: number }): Promise<SuperTemplateRow>;
  /** Restarts a failed build (a later device retries it). */
  retryBuild(id: string): Promise<boolean>;
  /** The distribution an enrollment belongs to (worker side, no tenant scope). */
  findDistribution(id: string): Promise<DistributionRow | null>;
}

export function superSignatureRepository(db: Kysely<Database>): SuperSignatureRepository {
  const findEnrollment = async (id: string) => (await db.selectFrom('super_enrollments').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  const findBuild = async (id: string) => (await db.selectFrom('super_builds').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;

  return {
    async createEnrollment(input) {
      const now = nowIso();
      const row: EnrollmentRow = {
        id: superId('enr'),
        distribution_id: input.distributionId,
        challenge_hash: input.challengeHash,
        state: 'awaiting_device',
        udid: null,
        product: null,
        os_version: null,
        device_name: null,
        developer_account_id: null,
        build_id: null,
        error_code: null,
        error_message: null,
        expires_at: nowIso(input.expiresAt),
        created_at: now,
        updated_at: now,
      };
      // Profile downloads that were never installed expire; drop them as new ones come in, so
      // repeated downloads of public links cannot grow the table without bound.
      await db.deleteFrom('super_enrollments').where('state', '=', 'awaiting_device').where('expires_at', '<', now).execute();
      await db.insertInto('super_enrollments').values(row).execute();
      return row;
    },

    findEnrollment,

    async findEnrollmentByChallenge(challengeHash) {
      return (await db.selectFrom('super_enrollments').selectAll().where('challenge_hash', '=', challengeHash).executeTakeFirst()) ?? null;
    },

    async updateEnrollment(id, patch, from) {
      const set: Record<string, string | null> = { updated_at: nowIso() };
      if (patch.state !== undefined) set.state = patch.state;
      if (patch.udid !== undefined) set.udid = patch.udid;
      if (patch.product !== undefined) set.product = patch.product;
      if (patch.osVersion !== undefined) set.os_version = patch.osVersion;
      if (patch.deviceName !== undefined) set.device_name = patch.deviceName;
      if (patch.developerAccountId !== undefined) set.developer_account_id = patch.developerAccountId;
      if (patch.buildId !== undefined) set.build_id = patch.buildId;
      if (patch.error !== undefined) {
        set.error_code = patch.error?.code ?? null;
        set.error_message = patch.error?.message ?? null;
      }
      let query = db.updateTable('super_enrollments').set(set).where('id', '=', id);
      if (from !== undefined) query = query.where('state', 'in', [...from]);
      const result = await query.executeTakeFirst();
      if (result.numUpdatedRows === 0n) return null;
      return findEnrollment(id);
    },

    async currentProfile(developerAccountId, bundleIdentifier) {
      return (
        (await db
          .selectFrom('super_profiles')
          .selectAll()
          .where('developer_account_id', '=', developerAccountId)
          .where('bundle_identifier', '=', bundleIdentifier)
          .where('superseded_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .executeTakeFirst()) ?? null
      );
    },

    async insertProfile(input) {
      const row: SuperProfileRow = {
        id: superId('spf'),
        developer_account_id: input.developerAccountId,
        bundle_identifier: input.bundleIdentifier,
        asc_bundle_id: input.ascBundleId,
        asc_profile_id: input.ascProfileId,
        uuid: input.uuid,
        name: input.name,
        content_b64: input.content.toString('base64'),
        udids_json: JSON.stringify(input.udids),
        expires_at: nowIso(input.expiresAt),
        superseded_at: null,
        retired_at: null,
        group_id: input.groupId ?? null,
        created_at: nowIso(),
      };
      await db.insertInto('super_profiles').values(row).execute();
      return row;
    },

    async profileGroup(profile) {
      const groupId = profile.group_id ?? profile.id;
      return db
        .selectFrom('super_profiles')
        .selectAll()
        .where((eb) => eb.or([eb('id', '=', groupId), eb('group_id', '=', groupId)]))
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
    },

    async savePlan(taskId, planJson) {
      try {
        await db.insertInto('super_task_plans').values({ task_id: taskId, plan_json: planJson, created_at: nowIso() }).execute();
        return planJson;
      } catch (error) {
        // A re-run of the task recorded one first: keep it (the first run's devices use it).
        const existing = await db.selectFrom('super_task_plans').select('plan_json').where('task_id', '=', taskId).executeTakeFirst();
        if (existing) return existing.plan_json;
        throw error;
      }
    },

    async findPlan(taskId) {
      return (await db.selectFrom('super_task_plans').select('plan_json').where('task_id', '=', taskId).executeTakeFirst())?.plan_json ?? null;
    },

    async supersedeOlderProfiles(profile) {
      const older = await db
        .selectFrom('super_profiles')
        .selectAll()
        .where('developer_account_id', '=', profile.developer_account_id)
        .where('bundle_identifier', '=', profile.bundle_identifier)
        .where('superseded_at', 'is', null)
        .where('id', '!=', profile.id)
        .where('created_at', '<=', profile.created_at)
        .execute();
      if (older.length > 0) {
        await db.updateTable('super_profiles').set({ superseded_at: nowIso() }).where('id', 'in', older.map((p) => p.id)).where('superseded_at', 'is', null).execute();
      }
      return older;
    },

    async findProfile(id) {
      return (await db.selectFrom('super_profiles').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },

    async retireForNewCertificate(developerAccountId) {
      const current = await db.selectFrom('super_profiles').selectAll().where('developer_account_id', '=', developerAccountId).where('superseded_at', 'is', null).execute();
      if (current.length > 0) {
        await db.updateTable('super_profiles').set({ superseded_at: nowIso() }).where('id', 'in', current.map((p) => p.id)).where('superseded_at', 'is', null).execute();
      }
      // Every profile of the old certificate, superseded earlier or now: their builds are re-made when asked for.
      await db.updateTable('super_profiles').set({ retired_at: nowIso() }).where('developer_account_id', '=', developerAccountId).where('retired_at', 'is', null).execute();
      await db.deleteFrom('super_templates').where('developer_account_id', '=', developerAccountId).execute();
      return current;
    },

    async supersededProfiles(developerAccountId) {
      return db.selectFrom('super_profiles').selectAll().where('developer_account_id', '=', developerAccountId).where('superseded_at', 'is not', null).execute();
    },

    async claimBuild(taskId, profileId) {
      const existing = await db.selectFrom('super_builds').selectAll().where('task_id', '=', taskId).where('profile_id', '=', profileId).executeTakeFirst();
      if (existing) return { build: existing, created: false };
      const now = nowIso();
      const row: SuperBuildRow = {
        id: superId('sbd'),
        task_id: taskId,
        profile_id: profileId,
        state: 'signing',
        artifact_blob_key: null,
        artifact_size: null,
        artifact_sha256: null,
        shared_blob_key: null,
        shared_size: null,
        error_code: null,
        error_message: null,
        created_at: now,
        updated_at: now,
      };
      try {
        await db.insertInto('super_builds').values(row).execute();
        return { build: row, created: true };
      } catch (error) {
        // Lost the (task, profile) unique key to a concurrent claim: theirs is the build.
        const winner = await db.selectFrom('super_builds').selectAll().where('task_id', '=', taskId).where('profile_id', '=', profileId).executeTakeFirst();
        if (winner) return { build: winner, created: false };
        throw error;
      }
    },

    findBuild,

    async finishBuild(id, outcome) {
      await db
        .updateTable('super_builds')
        .set({
          state: outcome.state,
          artifact_blob_key: outcome.artifact?.blobKey ?? null,
          artifact_size: outcome.artifact?.size ?? null,
          artifact_sha256: outcome.artifact?.sha256 ?? null,
          shared_blob_key: outcome.artifact?.shared?.blobKey ?? null,
          shared_size: outcome.artifact?.shared?.size ?? null,
          error_code: outcome.error?.code ?? null,
          error_message: outcome.error?.message ?? null,
          updated_at: nowIso(),
        })
        .where('id', '=', id)
        .execute();
      return findBuild(id);
    },

    async findTemplate(taskId, developerAccountId) {
      return (await db.selectFrom('super_templates').selectAll().where('task_id', '=', taskId).where('developer_account_id', '=', developerAccountId).executeTakeFirst()) ?? null;
    },

    async saveTemplate(input) {
      const row: SuperTemplateRow = {
        id: superId('stp'),
        task_id: input.taskId,
        developer_account_id: input.developerAccountId,
        shared_blob_key: input.sharedBlobKey,
        shared_size: input.sharedSize,
        created_at: nowIso(),
      };
      try {
        await db.insertInto('super_templates').values(row).execute();
        return row;
      } catch (error) {
        const existing = await db.selectFrom('super_templates').selectAll().where('task_id', '=', input.taskId).where('developer_account_id', '=', input.developerAccountId).executeTakeFirst();
        if (existing) return existing;
        throw error;
      }
    },

    async findDistribution(id) {
      return (await db.selectFrom('distributions').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },

    async retryBuild(id) {
      const result = await db.updateTable('super_builds').set({ state: 'signing', error_code: null, error_message: null, updated_at: nowIso() }).where('id', '=', id).where('state', '=', 'failed').executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
