import { type Kysely, sql } from 'kysely';
import type { AppLinkRow, DistributionRow } from '../distribution-tables.ts';
import { newId } from '../ids.ts';
import type { Database, Platform } from '../schema.ts';
import { before, decodeCursor, nowIso, pageLimit, toPage, type Page, type PageRequest } from './pagination.ts';

export interface DistributionRepository {
  /** Inserts the task's distribution (idempotent per task: an existing one is returned). */
  create(input: {
    accountId: string;
    taskId: string;
    appId: string | null;
    platform: Platform;
    slug: string;
    iconBlobKey: string | null;
    /** What the package requires (migration 0009); see DistributionsTable. */
    minimumOs?: string | null;
    deviceFamilies?: readonly string[] | null;
    nativeAbis?: readonly string[] | null;
  }): Promise<DistributionRow>;
  find(accountId: string, id: string): Promise<DistributionRow | null>;
  findByTask(accountId: string, taskId: string): Promise<DistributionRow | null>;
  /** Public lookup by the slug of /d/{slug}; no account scope (the slug is the credential). */
  findBySlug(slug: string): Promise<DistributionRow | null>;
  /** Applies the given fields (null clears password/expiry/quota); null when not found. */
  update(accountId: string, id: string, patch: { passwordHash?: string | null; expiresAt?: Date | null; maxDownloads?: number | null; enabled?: boolean }): Promise<DistributionRow | null>;
  /** Counts one download if the quota allows; returns the new total, or null when the quota is exhausted. */
  countDownload(id: string, now?: Date): Promise<number | null>;
  /** Downloads per UTC day, newest first (the last 366 days at most). */
  dailyDownloads(id: string): Promise<Array<{ day: string; downloads: number }>>;
  /** The newest enabled distribution of an app (its permanent link serves it). */
  latestForApp(appId: string): Promise<DistributionRow | null>;
  /** Every distribution of the account (enabled or not), newest first: the console's links page. */
  list(accountId: string, page?: PageRequest): Promise<Page<DistributionRow>>;
  /** Every distribution of an app (enabled or not), newest first: the console's versions, the permanent link and the version history. */
  listAllForApp(accountId: string, appId: string, page?: PageRequest): Promise<Page<DistributionRow>>;
  /** Downloads of all of an app's links: the total, and per UTC day (newest first, at most 366 days). */
  appDownloads(appId: string): Promise<{ total: number; byDay: Array<{ day: string; downloads: number }> }>;
  /** Usable links per certificate of the account (enabled, unexpired, quota left), by certificate id. */
  liveLinksByCertificate(accountId: string, now?: Date): Promise<Map<string, number>>;
  /** The app's permanent link, created with `slug` if it has none yet. */
  ensureAppLink(accountId: string, appId: string, slug: string): Promise<AppLinkRow>;
  findAppLink(appId: string): Promise<AppLinkRow | null>;
  findAppLinkBySlug(slug: string): Promise<AppLinkRow | null>;
  /**
   * Records that `clientKey` started a counted download of the link at `now` (replacing an older
   * start), and forgets starts older than `forgetBefore`.
   */
  recordDownloadStart(id: string, clientKey: string, now: Date, forgetBefore: Date): Promise<void>;
  /** True when `clientKey` started a counted download of the link at or after `since`. */
  downloadStartedSince(id: string, clientKey: string, since: Date): Promise<boolean>;
}

export function distributionRepository(db: Kysely<Database>): DistributionRepository {
  const byId = (id: string) => db.selectFrom('distributions').selectAll().where('id', '=', id);

  return {
    async create(input) {
      const now = nowIso();
      return db
        .insertInto('distributions')
        .values({
          id: newId('dst'),
          account_id: input.accountId,
          task_id: input.taskId,
          app_id: input.appId,
          slug: input.slug,
          platform: input.platform,
          icon_blob_key: input.iconBlobKey,
          minimum_os: input.minimumOs ?? null,
          device_families: input.deviceFamilies ? JSON.stringify(input.deviceFamilies) : null,
          native_abis: input.nativeAbis ? JSON.stringify(input.nativeAbis) : null,
          password_hash: null,
          expires_at: null,
          max_downloads: null,
          downloads: 0,
          enabled: 'yes',
          created_at: now,
          updated_at: now,
        })
        // A task gets one distribution even when two workers race to publish it.
        .onConflict((oc) => oc.column('task_id').doNothing())
        .execute()
        .then(() => db.selectFrom('distributions').selectAll().where('task_id', '=', input.taskId).executeTakeFirstOrThrow());
    },

    async find(accountId, id) {
      return (await byId(id).where('account_id', '=', accountId).executeTakeFirst()) ?? null;
    },

    async findByTask(accountId, taskId) {
      return (
        (await db.selectFrom('distributions').selectAll().where('task_id', '=', taskId).where('account_id', '=', accountId).executeTakeFirst()) ??
        null
      );
    },

    async findBySlug(slug) {
      return (await db.selectFrom('distributions').selectAll().where('slug', '=', slug).executeTakeFirst()) ?? null;
    },

    async update(accountId, id, patch) {
      const values: Partial<DistributionRow> = { updated_at: nowIso() };
      if (patch.passwordHash !== undefined) values.password_hash = patch.passwordHash;
      if (patch.expiresAt !== undefined) values.expires_at = patch.expiresAt === null ? null : nowIso(patch.expiresAt);
      if (patch.maxDownloads !== undefined) values.max_downloads = patch.maxDownloads;
      if (patch.enabled !== undefined) values.enabled = patch.enabled ? 'yes' : 'no';
      await db.updateTable('distributions').set(values).where('id', '=', id).where('account_id', '=', accountId).execute();
      return (await byId(id).where('account_id', '=', accountId).executeTakeFirst()) ?? null;
    },

    async countDownload(id, now = new Date()) {
      // One conditional UPDATE is the quota check and the increment at once, so concurrent
      // downloads can neither overshoot the quota nor lose a count.
      const row = await db
        .updateTable('distributions')
        .set({ downloads: sql`downloads + 1`, updated_at: nowIso(now) })
        .where('id', '=', id)
        .where(({ or, eb }) => or([eb('max_downloads', 'is', null), eb('downloads', '<', eb.ref('max_downloads'))]))
        .returning('downloads')
        .executeTakeFirst();
      if (row === undefined) return null;
      await db
        .insertInto('distribution_daily_downloads')
        .values({ distribution_id: id, day: nowIso(now).slice(0, 10), downloads: 1 })
        .onConflict((oc) =>
          oc.columns(['distribution_id', 'day']).doUpdateSet({ downloads: sql`distribution_daily_downloads.downloads + 1` }),
        )
        .execute();
      return row.downloads;
    },

    async dailyDownloads(id) {
      return db
        .selectFrom('distribution_daily_downloads')
        .select(['day', 'downloads'])
        .where('distribution_id', '=', id)
        .orderBy('day', 'desc')
        .limit(366)
        .execute();
    },

    async list(accountId, page) {
      const limit = pageLimit(page);
      const cursor = decodeCursor(page?.cursor);
      let query = db.selectFrom('distributions').selectAll().where('account_id', '=', accountId);
      if (cursor !== null) query = query.where(before('created_at', 'id', cursor));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit, (row) => row.created_at);
    },

    async listAllForApp(accountId, appId, page) {
      const limit = pageLimit(page);
      const cursor = decodeCursor(page?.cursor);
      let query = db.selectFrom('distributions').selectAll().where('account_id', '=', accountId).where('app_id', '=', appId);
      if (cursor !== null) query = query.where(before('created_at', 'id', cursor));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit, (row) => row.created_at);
    },

    async appDownloads(appId) {
      const total = await db
        .selectFrom('distributions')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('downloads'), eb.lit(0)).as('n'))
        .where('app_id', '=', appId)
        .executeTakeFirstOrThrow();
      const byDay = await db
        .selectFrom('distribution_daily_downloads')
        .innerJoin('distributions', 'distributions.id', 'distribution_daily_downloads.distribution_id')
        .select(['distribution_daily_downloads.day', (eb) => eb.fn.sum<number>('distribution_daily_downloads.downloads').as('downloads')])
        .where('distributions.app_id', '=', appId)
        .groupBy('distribution_daily_downloads.day')
        .orderBy('distribution_daily_downloads.day', 'desc')
        .limit(366)
        .execute();
      return { total: Number(total.n), byDay: byDay.map((d) => ({ day: d.day, downloads: Number(d.downloads) })) };
    },

    async liveLinksByCertificate(accountId, now = new Date()) {
      const rows = await db
        .selectFrom('distributions')
        .innerJoin('tasks', 'tasks.id', 'distributions.task_id')
        .select(['tasks.certificate_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('distributions.account_id', '=', accountId)
        .where('distributions.enabled', '=', 'yes')
        .where('tasks.certificate_id', 'is not', null)
        .where(({ or, eb }) => or([eb('distributions.expires_at', 'is', null), eb('distributions.expires_at', '>', nowIso(now))]))
        .where(({ or, eb }) => or([eb('distributions.max_downloads', 'is', null), eb('distributions.downloads', '<', eb.ref('distributions.max_downloads'))]))
        .groupBy('tasks.certificate_id')
        .execute();
      return new Map(rows.map((r) => [r.certificate_id!, Number(r.n)]));
    },

    async latestForApp(appId) {
      return (
        (await db
          .selectFrom('distributions')
          .selectAll()
          .where('app_id', '=', appId)
          .where('enabled', '=', 'yes')
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .executeTakeFirst()) ?? null
      );
    },

    async ensureAppLink(accountId, appId, slug): Promise<AppLinkRow> {
      await db
        .insertInto('app_links')
        .values({ app_id: appId, account_id: accountId, slug, created_at: nowIso() })
        .onConflict((oc) => oc.column('app_id').doNothing())
        .execute();
      return db.selectFrom('app_links').selectAll().where('app_id', '=', appId).executeTakeFirstOrThrow();
    },

    async findAppLink(appId) {
      return (await db.selectFrom('app_links').selectAll().where('app_id', '=', appId).executeTakeFirst()) ?? null;
    },

    async findAppLinkBySlug(slug) {
      return (await db.selectFrom('app_links').selectAll().where('slug', '=', slug).executeTakeFirst()) ?? null;
    },

    async recordDownloadStart(id, clientKey, now, forgetBefore) {
      await db
        .insertInto('download_starts')
        .values({ distribution_id: id, client_key: clientKey, started_at: nowIso(now) })
        .onConflict((oc) => oc.columns(['distribution_id', 'client_key']).doUpdateSet({ started_at: nowIso(now) }))
        .execute();
      await db.deleteFrom('download_starts').where('started_at', '<', nowIso(forgetBefore)).execute();
    },

    async downloadStartedSince(id, clientKey, since) {
      const row = await db
        .selectFrom('download_starts')
        .select('started_at')
        .where('distribution_id', '=', id)
        .where('client_key', '=', clientKey)
        .where('started_at', '>=', nowIso(since))
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
