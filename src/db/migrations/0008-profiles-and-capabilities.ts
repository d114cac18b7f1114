// Profiles per bundle (issue 20):
// - certificate_profiles: the provisioning profiles of an iOS enterprise certificate, several per
//   certificate (the app and each extension may need their own explicit App ID). The profile
//   each existing certificate was uploaded with moves here; its sealed bytes move as they are
//   (`sealed_as = 'certificate'`: still bound to the certificate row they were sealed for, since
//   a migration has no key to re-seal them), and its UUID and entitlements are filled in the
//   first time the service reads it (they were never stored outside the sealed bytes).
// - developer_app_ids: the explicit App IDs Signet registered in each Apple developer account
//   and the capabilities enabled on them; the (account, identifier) unique key makes concurrent
//   registrations by several workers meet on one row.
// - super_task_plans: per super task, which App IDs and capabilities its bundles need and which
//   entitlements cannot be carried over.
// - super_profiles.group_id: the ad-hoc profiles made together for one app (the app's and its
//   extensions'), so a device build takes a consistent set.
// - tasks.bundles_json: which profile signed which bundle; tasks.warnings_json: what signing left
//   out and why (added only when a sibling migration has not added it already).
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';
import { newId } from '../ids.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  const schema = db.schema;

  await schema
    .createTable('certificate_profiles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('certificate_id', 'text', (c) => c.notNull().references('certificates.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('profile_sealed', 'text', (c) => c.notNull())
    .addColumn('sealed_as', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('uuid', 'text')
    .addColumn('app_id', 'text')
    .addColumn('type', 'text')
    .addColumn('team_id', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('entitlements_json', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('certificate_profiles_uuid', ['certificate_id', 'uuid'])
    .execute();
  await schema.createIndex('certificate_profiles_certificate').on('certificate_profiles').columns(['certificate_id', 'created_at', 'id']).execute();

  const legacy = await db
    .selectFrom('certificates')
    .select(['id', 'account_id', 'profile_sealed', 'profile_name', 'profile_app_id', 'profile_type', 'team_id', 'profile_expires_at', 'created_at'])
    .where('kind', '=', 'ios_enterprise')
    .where('profile_sealed', 'is not', null)
    .execute();
  for (const row of legacy) {
    await db
      .insertInto('certificate_profiles')
      .values({
        id: newId('prf'),
        certificate_id: row.id,
        account_id: row.account_id,
        profile_sealed: row.profile_sealed,
        sealed_as: 'certificate',
        name: row.profile_name,
        uuid: null,
        app_id: row.profile_app_id,
        type: row.profile_type,
        team_id: row.team_id,
        expires_at: row.profile_expires_at,
        entitlements_json: null,
        created_at: row.created_at,
      })
      .execute();
  }
  // One source of truth: the certificate row no longer holds a profile.
  await db
    .updateTable('certificates')
    .set({ profile_sealed: null, profile_name: null, profile_app_id: null, profile_type: null, profile_expires_at: null })
    .where('kind', '=', 'ios_enterprise')
    .execute();

  await schema
    .createTable('developer_app_ids')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_account_id', 'text', (c) => c.notNull().references('developer_accounts.id').onDelete('cascade'))
    .addColumn('identifier', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('asc_bundle_id', 'text')
    .addColumn('capabilities_json', 'text', (c) => c.notNull())
    .addColumn('capabilities_changed_at', 'text')
    .addColumn('detail', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('developer_app_ids_identifier', ['developer_account_id', 'identifier'])
    .execute();

  await schema
    .createTable('super_task_plans')
    .addColumn('task_id', 'text', (c) => c.primaryKey().references('tasks.id').onDelete('cascade'))
    .addColumn('plan_json', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await schema.alterTable('super_profiles').addColumn('group_id', 'text').execute();

  await schema.alterTable('tasks').addColumn('bundles_json', 'text').execute();
  const tasks = (await db.introspection.getTables()).find((t) => t.name === 'tasks');
  if (!tasks?.columns.some((c) => c.name === 'warnings_json')) await schema.alterTable('tasks').addColumn('warnings_json', 'text').execute();
}
