// What testers see before installing (#19), stored with each release when it is published: the
// minimum OS, the device families (iOS) and native ABIs (Android) read from the signed package;
// and the download starts that let a started download finish after the quota filled.
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  const schema = db.schema;
  // Null on releases published before this migration: the page then leaves the row out.
  await schema.alterTable('distributions').addColumn('minimum_os', 'text').execute();
  await schema.alterTable('distributions').addColumn('device_families', 'text').execute();
  await schema.alterTable('distributions').addColumn('native_abis', 'text').execute();

  await schema
    .createTable('download_starts')
    .addColumn('distribution_id', 'text', (c) => c.notNull().references('distributions.id').onDelete('cascade'))
    .addColumn('client_key', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('download_starts_pk', ['distribution_id', 'client_key'])
    .execute();
  await schema.createIndex('download_starts_started').on('download_starts').column('started_at').execute();
}
