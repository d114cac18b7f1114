// Deleting an account (team), for its owners: running tasks are canceled first, then every row
// of the account goes in one transaction (the schema cascades from accounts), then the blobs
// those rows pointed at (uploads, artifacts, icons, per-device builds) are deleted. A blob that
// cannot be deleted is logged and left for the operator; the data that referenced it is gone.
import type { Db } from '../db/database.ts';
import { allRows } from '../db/repositories/pagination.ts';
import { AppError } from '../errors.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { Principal } from './principal.ts';
import type { TaskService } from './tasks.ts';

export class AccountDeletionService {
  readonly #db: Db;
  readonly #blobs: BlobStore;
  readonly #tasks: TaskService;
  readonly #log: (message: string, error: unknown) => void;

  constructor(options: { db: Db; blobs: BlobStore; tasks: TaskService; log?: (message: string, error: unknown) => void }) {
    this.#db = options.db;
    this.#blobs = options.blobs;
    this.#tasks = options.tasks;
    this.#log = options.log ?? (() => undefined);
  }

  /** `confirm` must repeat the account's name. Returns how many stored files were deleted. */
  async delete(principal: Principal, confirm: string): Promise<{ blobsDeleted: number }> {
    if (principal.user?.role !== 'owner') throw new AppError('owner_required', 'Only an owner can delete the account.');
    const account = await this.#db.repos.accounts.findById(principal.accountId);
    if (!account) throw new AppError('not_found', 'The account no longer exists.');
    if (confirm !== account.name) throw new AppError('invalid_request', 'confirm must repeat the account name exactly', { details: { field: 'confirm' } });

    for (const status of ['pending', 'processing'] as const) {
      for await (const task of allRows((page) => this.#db.repos.tasks.list(account.id, { ...page, status }))) {
        await this.#tasks.cancel(principal, task.id).catch(() => undefined);
      }
    }
    const keys = await this.#db.transaction(async (tx) => {
      const k = tx.kysely;
      const rows = await Promise.all([
        k.selectFrom('uploads').select('blob_key as key').where('account_id', '=', account.id).execute(),
        k.selectFrom('tasks').select('input_blob_key as key').where('account_id', '=', account.id).execute(),
        k.selectFrom('tasks').select('artifact_blob_key as key').where('account_id', '=', account.id).execute(),
        k.selectFrom('distributions').select('icon_blob_key as key').where('account_id', '=', account.id).execute(),
        k.selectFrom('super_builds').innerJoin('tasks', 'tasks.id', 'super_builds.task_id').select('super_builds.artifact_blob_key as key').where('tasks.account_id', '=', account.id).execute(),
        k.selectFrom('super_builds').innerJoin('tasks', 'tasks.id', 'super_builds.task_id').select('super_builds.shared_blob_key as key').where('tasks.account_id', '=', account.id).execute(),
        k.selectFrom('super_templates').innerJoin('tasks', 'tasks.id', 'super_templates.task_id').select('super_templates.shared_blob_key as key').where('tasks.account_id', '=', account.id).execute(),
      ]);
      await k.deleteFrom('accounts').where('id', '=', account.id).execute();
      return new Set(rows.flat().map((r) => r.key).filter((key): key is string => typeof key === 'string' && key !== ''));
    });
    let deleted = 0;
    for (const key of keys) {
      try {
        await this.#blobs.delete(key);
        deleted += 1;
      } catch (error) {
        this.#log(`could not delete blob ${key} of deleted account ${account.id}`, error);
      }
    }
    return { blobsDeleted: deleted };
  }
}
