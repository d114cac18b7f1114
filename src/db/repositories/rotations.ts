// Certificate rotations and their items (migration 0012), and the distribution swap that makes a
// link serve the re-signed build.
import type { Kysely } from 'kysely';
import type { DistributionRow } from '../distribution-tables.ts';
import type { RotationItemRow, RotationItemState, RotationRow } from '../lifecycle-tables.ts';
import { newId } from '../ids.ts';
import type { Database } from '../schema.ts';
import { nowIso } from './pagination.ts';

export interface RotationRepository {
  create(input: { accountId: string; fromCertificateId: string; toCertificateId: string; items: Array<{ distributionId: string; oldTaskId: string; newTaskId: string }> }): Promise<RotationRow>;
  find(accountId: string, id: string): Promise<RotationRow | null>;
  list(accountId: string, limit: number): Promise<RotationRow[]>;
  items(rotationId: string): Promise<RotationItemRow[]>;
  /** The running item whose task is `taskId`, if any. */
  itemForTask(taskId: string): Promise<RotationItemRow | null>;
  setItemState(rotationId: string, distributionId: string, state: RotationItemState, error: string | null): Promise<void>;
  /**
   * Live links (enabled, unexpired) whose release was signed with `certificateId`: what a
   * rotation re-signs. Links whose quota filled are included (raising the quota revives them).
   */
  liveDistributions(accountId: string, certificateId: string, now: Date): Promise<Array<DistributionRow & { input_blob_key: string }>>;
  /** Points the link at the re-signed release; false when it no longer serves `fromTaskId`. */
  swapTask(distributionId: string, fromTaskId: string, toTaskId: string): Promise<boolean>;
}

export function rotationRepository(db: Kysely<Database>): RotationRepository {
  return {
    async create(input) {
      const now = nowIso();
      const row: RotationRow = { id: newId('rot'), account_id: input.accountId, from_certificate_id: input.fromCertificateId, to_certificate_id: input.toCertificateId, created_at: now };
      await db.insertInto('rotations').values(row).execute();
      for (const item of input.items) {
        await db
          .insertInto('rotation_items')
          .values({ rotation_id: row.id, distribution_id: item.distributionId, old_task_id: item.oldTaskId, new_task_id: item.newTaskId, state: 'running', error: null, updated_at: now })
          .execute();
      }
      return row;
    },
    async find(accountId, id) {
      return (await db.selectFrom('rotations').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()) ?? null;
    },
    list: (accountId, limit) => db.selectFrom('rotations').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute(),
    items: (rotationId) => db.selectFrom('rotation_items').selectAll().where('rotation_id', '=', rotationId).orderBy('distribution_id').execute(),
    async itemForTask(taskId) {
      return (await db.selectFrom('rotation_items').selectAll().where('new_task_id', '=', taskId).executeTakeFirst()) ?? null;
    },
    async setItemState(rotationId, distributionId, state, error) {
      await db.updateTable('rotation_items').set({ state, error, updated_at: nowIso() }).where('rotation_id', '=', rotationId).where('distribution_id', '=', distributionId).execute();
    },
    async liveDistributions(accountId, certificateId, now) {
      const rows = await db
        .selectFrom('distributions')
        .innerJoin('tasks', 'tasks.id', 'distributions.task_id')
        .selectAll('distributions')
        .select('tasks.input_blob_key')
        .where('distributions.account_id', '=', accountId)
        .where('tasks.certificate_id', '=', certificateId)
        .where('distributions.enabled', '=', 'yes')
        .where((eb) => eb.or([eb('distributions.expires_at', 'is', null), eb('distributions.expires_at', '>', nowIso(now))]))
        .orderBy('distributions.created_at')
        .execute();
      return rows as Array<DistributionRow & { input_blob_key: string }>;
    },
    async swapTask(distributionId, fromTaskId, toTaskId) {
      const result = await db.updateTable('distributions').set({ task_id: toTaskId, updated_at: nowIso() }).where('id', '=', distributionId).where('task_id', '=', fromTaskId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
