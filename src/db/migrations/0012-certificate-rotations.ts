// Certificate rotation (#15): one row per rotation (from one certificate to another) and one per
// live release it re-signs, with the task doing it and whether the link now serves its build.
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  const schema = db.schema;
  await schema
    .createTable('rotations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('from_certificate_id', 'text', (c) => c.notNull())
    .addColumn('to_certificate_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('rotations_account').on('rotations').columns(['account_id', 'created_at']).execute();
  await schema
    .createTable('rotation_items')
    .addColumn('rotation_id', 'text', (c) => c.notNull().references('rotations.id').onDelete('cascade'))
    .addColumn('distribution_id', 'text', (c) => c.notNull().references('distributions.id').onDelete('cascade'))
    .addColumn('old_task_id', 'text', (c) => c.notNull())
    .addColumn('new_task_id', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('rotation_items_pk', ['rotation_id', 'distribution_id'])
    .execute();
  await schema.createIndex('rotation_items_new_task').on('rotation_items').column('new_task_id').execute();
}
