// Per-account quotas (issue 12): the storage quota sums an account's uploads on every upload, so
// uploads get an index by account (tasks already have tasks_account_status_created).
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.createIndex('uploads_account').on('uploads').columns(['account_id', 'size']).execute();
}
