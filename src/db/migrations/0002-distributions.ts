// Install links. A distribution is the public face of one succeeded task (its slug is the
// unguessable part of /d/{slug}); an app link is the permanent /a/{slug} of an app, which always
// serves the app's newest succeeded release. Downloads are counted per distribution and per day.
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  const schema = db.schema;

  await schema
    .createTable('distributions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('task_id', 'text', (c) => c.notNull().unique().references('tasks.id').onDelete('cascade'))
    .addColumn('app_id', 'text', (c) => c.references('apps.id').onDelete('set null'))
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('icon_blob_key', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('max_downloads', 'integer')
    .addColumn('downloads', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enabled', 'text', (c) => c.notNull().defaultTo('yes'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('distributions_app').on('distributions').columns(['app_id', 'created_at', 'id']).execute();
  await schema.createIndex('distributions_account').on('distributions').columns(['account_id', 'created_at', 'id']).execute();

  await schema
    .createTable('distribution_daily_downloads')
    .addColumn('distribution_id', 'text', (c) => c.notNull().references('distributions.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('downloads', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('distribution_daily_downloads_pk', ['distribution_id', 'day'])
    .execute();

  await schema
    .createTable('app_links')
    .addColumn('app_id', 'text', (c) => c.primaryKey().references('apps.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
