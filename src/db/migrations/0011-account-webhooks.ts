// Account-level webhooks (#15): endpoints an account registers for events (certificate health,
// developer accounts, tasks, download quotas), the events themselves (also the console's recent
// alerts) and one row per delivery attempt, like a task's callback deliveries.
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  const schema = db.schema;
  await schema
    .createTable('account_webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events_json', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('account_webhooks_account').on('account_webhooks').columns(['account_id', 'created_at']).execute();

  await schema
    .createTable('account_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('data_json', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('account_events_account').on('account_events').columns(['account_id', 'created_at']).execute();

  await schema
    .createTable('account_webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('account_webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('account_events.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('account_webhook_deliveries_webhook').on('account_webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
}
