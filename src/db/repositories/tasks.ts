// Task rows and their state machine: pending → processing → succeeded | failed | canceled.
// Every transition is one conditional UPDATE whose WHERE names the states it may leave, so
// concurrent actors (a worker finishing, a user canceling, a re-run after a crash) cannot both
// win: the database decides, and the loser sees null.
import type { Kysely } from 'kysely';
import { newId } from '../ids.ts';
import type { CertType, Database, Platform, TaskBundle, TaskRow, TasksTable, TaskStatus, TaskWarning } from '../schema.ts';
import { before, decodeCursor, nowIso, pageLimit, toPage, type Page, type PageRequest } from './pagination.ts';

export interface NewTaskInput {
  accountId: string;
  platform: Platform;
  uploadId: string;
  inputBlobKey: string;
  inputFilename: string;
  certificateId: string | null;
  certType: CertType;
  options: Record<string, unknown>;
  callbackUrl: string | null;
  appId: string | null;
  /** The package identity read at upload; the signer's report replaces it when the task succeeds. */
  app?: { bundleId: string | null; name: string | null; version: string | null; build: string | null };
  maxAttempts?: number; // default 3
  /** Release notes (plain text or Markdown). */
  notes?: string | null;
}

/** How a task run ended; `finish` applies it only if the task is not terminal yet. */
export type TaskOutcome =
  | {
      status: 'succeeded';
      artifact: { blobKey: string; size: number; sha256: string };
      app: { bundleId: string | null; name: string | null; version: string | null; build: string | null };
      verification: string[];
      /** Which profile signed which bundle (iOS). */
      bundles?: TaskBundle[];
      /** What signing left out and why. */
      warnings?: TaskWarning[];
    }
  | { status: 'failed'; error: { code: string; message: string } }
  | { status: 'canceled' };

export interface TaskRepository {
  /** Inserts a `pending` task (id `tsk_…`). Enqueue its sign_task job in the same transaction. */
  create(input: NewTaskInput): Promise<TaskRow>;
  /** accountId null = any account (worker side). */
  find(accountId: string | null, id: string): Promise<TaskRow | null>;
  /** Newest first, optionally one status and/or one app. */
  list(accountId: string, page?: PageRequest & { status?: TaskStatus; appId?: string }): Promise<Page<TaskRow>>;
  /**
   * A run begins: pending|processing → processing, attempts := attempt, started_at := now.
   * Null when the task is already terminal (e.g. canceled while queued): skip the work.
   */
  start(id: string, attempt: number): Promise<TaskRow | null>;
  /** Graceful release: processing → pending, so the next run starts cleanly. */
  handBack(id: string): Promise<void>;
  /**
   * The single way into a terminal state: an optimistic UPDATE … WHERE status IN
   * ('pending','processing'). Exactly one caller wins; the others get null (and must discard
   * their result, e.g. delete an artifact blob they wrote).
   */
  finish(id: string, outcome: TaskOutcome): Promise<TaskRow | null>;
  /** Tasks using this certificate that are still pending or processing. */
  countActiveByCertificate(certificateId: string): Promise<number>;
  /** The account's pending or processing tasks, counted up to `upTo` (a quota check needs no more). */
  countActiveByAccount(accountId: string, upTo: number): Promise<number>;
  /** Tasks of every account per status (metrics). */
  countByStatus(): Promise<Record<TaskStatus, number>>;
}

const ACTIVE = ['pending', 'processing'] as const;
export const DEFAULT_MAX_ATTEMPTS = 3;

export function taskRepository(db: Kysely<Database>): TaskRepository {
  return {
    async create(input) {
      const now = nowIso();
      const row: TaskRow = {
        id: newId('tsk'),
        account_id: input.accountId,
        status: 'pending',
        platform: input.platform,
        upload_id: input.uploadId,
        input_blob_key: input.inputBlobKey,
        input_filename: input.inputFilename,
        certificate_id: input.certificateId,
        cert_type: input.certType,
        options_json: JSON.stringify(input.options),
        callback_url: input.callbackUrl,
        app_id: input.appId,
        bundle_id: input.app?.bundleId ?? null,
        app_name: input.app?.name ?? null,
        app_version: input.app?.version ?? null,
        app_build: input.app?.build ?? null,
        attempts: 0,
        max_attempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        error_code: null,
        error_message: null,
        artifact_blob_key: null,
        artifact_size: null,
        artifact_sha256: null,
        verification_json: null,
        bundles_json: null,
        warnings_json: null,
        created_at: now,
        updated_at: now,
        started_at: null,
        finished_at: null,
        notes: input.notes ?? null,
      };
      await db.insertInto('tasks').values(row).execute();
      return row;
    },

    async find(accountId, id) {
      let query = db.selectFrom('tasks').selectAll().where('id', '=', id);
      if (accountId !== null) query = query.where('account_id', '=', accountId);
      return (await query.executeTakeFirst()) ?? null;
    },

    async list(accountId, page) {
      const limit = pageLimit(page);
      const cursor = decodeCursor(page?.cursor);
      let query = db.selectFrom('tasks').selectAll().where('account_id', '=', accountId);
      if (page?.status !== undefined) query = query.where('status', '=', page.status);
      if (page?.appId !== undefined) query = query.where('app_id', '=', page.appId);
      if (cursor !== null) query = query.where(before('created_at', 'id', cursor));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit, (row) => row.created_at);
    },

    async start(id, attempt) {
      const now = nowIso();
      // `processing` may be left by a run whose process died; the re-run takes it over.
      const row = await db
        .updateTable('tasks')
        .set({ status: 'processing', attempts: attempt, started_at: now, updated_at: now })
        .where('id', '=', id)
        .where('status', 'in', ACTIVE)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },

    async handBack(id) {
      await db
        .updateTable('tasks')
        .set({ status: 'pending', updated_at: nowIso() })
        .where('id', '=', id)
        .where('status', '=', 'processing')
        .execute();
    },

    async finish(id, outcome) {
      const now = nowIso();
      let changes: Partial<TasksTable>;
      switch (outcome.status) {
        case 'succeeded':
          changes = {
            artifact_blob_key: outcome.artifact.blobKey,
            artifact_size: outcome.artifact.size,
            artifact_sha256: outcome.artifact.sha256,
            bundle_id: outcome.app.bundleId,
            app_name: outcome.app.name,
            app_version: outcome.app.version,
            app_build: outcome.app.build,
            verification_json: JSON.stringify(outcome.verification),
            bundles_json: outcome.bundles === undefined ? null : JSON.stringify(outcome.bundles),
            warnings_json: outcome.warnings === undefined ? null : JSON.stringify(outcome.warnings),
          };
          break;
        case 'failed':
          changes = { error_code: outcome.error.code, error_message: outcome.error.message };
          break;
        case 'canceled':
          changes = {};
          break;
      }
      // Success is only possible from `processing` (a run produced it); failure and cancel also
      // from `pending` (a task whose input vanished, a user canceling a queued task).
      const from = outcome.status === 'succeeded' ? (['processing'] as const) : ACTIVE;
      const row = await db
        .updateTable('tasks')
        .set({ ...changes, status: outcome.status, finished_at: now, updated_at: now })
        .where('id', '=', id)
        .where('status', 'in', from)
        .returningAll()
        .executeTakeFirst();
      return row ?? null;
    },

    async countActiveByCertificate(certificateId) {
      const { count } = await db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('certificate_id', '=', certificateId)
        .where('status', 'in', ACTIVE)
        .executeTakeFirstOrThrow();
      return Number(count);
    },

    async countActiveByAccount(accountId, upTo) {
      const { count } = await db
        .selectFrom((eb) => eb.selectFrom('tasks').select('id').where('account_id', '=', accountId).where('status', 'in', ACTIVE).limit(upTo).as('active'))
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(count);
    },

    async countByStatus() {
      const rows = await db.selectFrom('tasks').select(['status', (eb) => eb.fn.countAll<number>().as('count')]).groupBy('status').execute();
      const counts: Record<TaskStatus, number> = { pending: 0, processing: 0, succeeded: 0, failed: 0, canceled: 0 };
      for (const row of rows) counts[row.status] = Number(row.count);
      return counts;
    },
  };
}
