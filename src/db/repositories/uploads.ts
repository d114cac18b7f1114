// Uploads (file_keys) and the apps they are grouped into by platform and bundle id.
import type { Kysely } from 'kysely';
import { newId } from '../ids.ts';
import type { AppRow, Database, Platform, UploadRow } from '../schema.ts';
import { before, decodeCursor, nowIso, pageLimit, toPage, type Page, type PageRequest } from './pagination.ts';

export interface UploadRepository {
  /** Inserts an upload whose blob is already stored; `id` is the file_key (ids.newFileKey()). */
  create(input: {
    id: string;
    accountId: string;
    filename: string;
    platform: Platform;
    size: number;
    sha256: string;
    blobKey: string;
    expiresAt: Date;
    notes?: string | null;
  }): Promise<UploadRow>;
  find(accountId: string, fileKey: string): Promise<UploadRow | null>;
  /** Records the package identity found by inspecting the upload and links it to its app. */
  setApp(
    fileKey: string,
    app: { appId: string; bundleId: string; name: string | null; version: string | null; build: string | null },
  ): Promise<void>;
  /** Replaces the upload's release notes (a multipart `notes` field sent after the file). */
  setNotes(fileKey: string, notes: string | null): Promise<void>;
  /** Uploads of an app, newest first. */
  listByApp(accountId: string, appId: string, page?: PageRequest): Promise<Page<UploadRow>>;
  /**
   * Expired uploads the sweeper may delete: expires_at <= now and no pending/processing task
   * still needs the blob (those wait until their task is terminal). With `keepLiveInputs`, an
   * upload a live release was signed from (an enabled, unexpired distribution of one of its
   * tasks) is kept too, so the release can be re-signed (certificate rotation).
   */
  listExpired(now: Date, limit: number, options?: { keepLiveInputs?: boolean }): Promise<UploadRow[]>;
  /** Deletes the row (the caller deletes the blob first). Returns false if it was already gone. */
  delete(fileKey: string): Promise<boolean>;
}

export interface AppRepository {
  /** Finds or creates the app for (account, platform, bundle id); refreshes `name` when given. */
  upsert(input: { accountId: string; platform: Platform; bundleId: string; name: string | null }): Promise<AppRow>;
  find(accountId: string, id: string): Promise<AppRow | null>;
  /**
   * Apps, most recently active first (upsert and touch refresh updated_at). The sort key moves,
   * so an app touched while a client pages may appear twice or be skipped once; the listing is
   * meant for humans, where recency matters more than a perfect snapshot.
   */
  list(accountId: string, page?: PageRequest & { platform?: Platform }): Promise<Page<AppRow>>;
  touch(id: string, now?: Date): Promise<void>;
}

export function uploadRepository(db: Kysely<Database>): UploadRepository {
  return {
    async create(input) {
      return db
        .insertInto('uploads')
        .values({
          id: input.id,
          account_id: input.accountId,
          filename: input.filename,
          platform: input.platform,
          size: input.size,
          sha256: input.sha256,
          blob_key: input.blobKey,
          app_id: null,
          bundle_id: null,
          app_name: null,
          app_version: null,
          app_build: null,
          created_at: nowIso(),
          expires_at: nowIso(input.expiresAt),
          notes: input.notes ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    async find(accountId, fileKey) {
      return (
        (await db.selectFrom('uploads').selectAll().where('id', '=', fileKey).where('account_id', '=', accountId).executeTakeFirst()) ??
        null
      );
    },
    async setApp(fileKey, app) {
      await db
        .updateTable('uploads')
        .set({ app_id: app.appId, bundle_id: app.bundleId, app_name: app.name, app_version: app.version, app_build: app.build })
        .where('id', '=', fileKey)
        .execute();
    },
    async setNotes(fileKey, notes) {
      await db.updateTable('uploads').set({ notes }).where('id', '=', fileKey).execute();
    },
    async listByApp(accountId, appId, page) {
      const limit = pageLimit(page);
      const cursor = decodeCursor(page?.cursor);
      let query = db.selectFrom('uploads').selectAll().where('account_id', '=', accountId).where('app_id', '=', appId);
      if (cursor !== null) query = query.where(before('created_at', 'id', cursor));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit, (row) => row.created_at);
    },
    async listExpired(now, limit, options = {}) {
      let query = db
        .selectFrom('uploads')
        .selectAll()
        .where('expires_at', '<=', nowIso(now))
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('tasks')
                .select('tasks.id')
                .whereRef('tasks.upload_id', '=', 'uploads.id')
                .where('tasks.status', 'in', ['pending', 'processing']),
            ),
          ),
        );
      if (options.keepLiveInputs) {
        query = query.where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('tasks')
                .innerJoin('distributions', 'distributions.task_id', 'tasks.id')
                .select('tasks.id')
                .whereRef('tasks.upload_id', '=', 'uploads.id')
                .where('distributions.enabled', '=', 'yes')
                .where((inner) => inner.or([inner('distributions.expires_at', 'is', null), inner('distributions.expires_at', '>', nowIso(now))])),
            ),
          ),
        );
      }
      return query.orderBy('expires_at').limit(limit).execute();
    },
    async delete(fileKey) {
      const result = await db.deleteFrom('uploads').where('id', '=', fileKey).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

export function appRepository(db: Kysely<Database>): AppRepository {
  return {
    async upsert({ accountId, platform, bundleId, name }) {
      const now = nowIso();
      // One statement, so two uploads of a new app racing each other still yield one app row.
      return db
        .insertInto('apps')
        .values({ id: newId('app'), account_id: accountId, platform, bundle_id: bundleId, name, created_at: now, updated_at: now })
        .onConflict((oc) =>
          oc.columns(['account_id', 'platform', 'bundle_id']).doUpdateSet((eb) => ({
            name: name === null ? eb.ref('apps.name') : eb.val(name),
            updated_at: now,
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    async find(accountId, id) {
      return (await db.selectFrom('apps').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()) ?? null;
    },
    async list(accountId, page) {
      const limit = pageLimit(page);
      const cursor = decodeCursor(page?.cursor);
      let query = db.selectFrom('apps').selectAll().where('account_id', '=', accountId);
      if (page?.platform !== undefined) query = query.where('platform', '=', page.platform);
      if (cursor !== null) query = query.where(before('updated_at', 'id', cursor));
      const rows = await query.orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit, (row) => row.updated_at);
    },
    async touch(id, now = new Date()) {
      await db.updateTable('apps').set({ updated_at: nowIso(now) }).where('id', '=', id).execute();
    },
  };
}
