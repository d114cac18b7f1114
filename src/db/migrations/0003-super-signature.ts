// Super signature: Apple developer accounts (App Store Connect API key + distribution identity),
// the devices registered in them (one row per UDID per account: a slot, reserved before Apple is
// asked and kept forever, since Apple never gives a slot back within a membership year), device
// enrollments started from an install page (the UDID-capture visits), the ad-hoc profiles Signet
// created, the per-(task, profile) signed builds, and the shared part of per-device builds (one
// per task and developer account: everything a profile does not change, stored once).
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';
import { DIALECT_FEATURES } from '../dialect.ts';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const schema = db.schema;
  const bigint = DIALECT_FEATURES[dialect].bigintType;

  await schema
    .createTable('developer_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('issuer_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('p8_sealed', 'text', (c) => c.notNull())
    .addColumn('p12_sealed', 'text', (c) => c.notNull())
    .addColumn('p12_password_sealed', 'text')
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('certificate_subject', 'text', (c) => c.notNull())
    .addColumn('certificate_serial', 'text', (c) => c.notNull())
    .addColumn('certificate_fingerprint', 'text', (c) => c.notNull())
    .addColumn('certificate_not_after', 'text', (c) => c.notNull())
    .addColumn('asc_certificate_id', 'text', (c) => c.notNull())
    .addColumn('health', 'text', (c) => c.notNull())
    .addColumn('health_detail', 'text')
    .addColumn('slots_per_class', 'integer', (c) => c.notNull())
    .addColumn('bundle_ids_json', 'text', (c) => c.notNull())
    .addColumn('checked_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('developer_accounts_key', ['account_id', 'issuer_id', 'key_id'])
    .execute();
  await schema.createIndex('developer_accounts_account').on('developer_accounts').columns(['account_id', 'created_at', 'id']).execute();

  await schema
    .createTable('developer_devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_account_id', 'text', (c) => c.notNull().references('developer_accounts.id').onDelete('cascade'))
    .addColumn('udid', 'text', (c) => c.notNull())
    .addColumn('device_class', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('asc_device_id', 'text')
    .addColumn('name', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('developer_devices_udid', ['developer_account_id', 'udid'])
    .execute();
  await schema.createIndex('developer_devices_udid_any').on('developer_devices').columns(['udid']).execute();

  await schema
    .createTable('super_profiles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('developer_account_id', 'text', (c) => c.notNull().references('developer_accounts.id').onDelete('cascade'))
    .addColumn('bundle_identifier', 'text', (c) => c.notNull())
    .addColumn('asc_bundle_id', 'text', (c) => c.notNull())
    .addColumn('asc_profile_id', 'text', (c) => c.notNull())
    .addColumn('uuid', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('content_b64', 'text', (c) => c.notNull())
    .addColumn('udids_json', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('superseded_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('super_profiles_bucket').on('super_profiles').columns(['developer_account_id', 'bundle_identifier', 'created_at']).execute();

  await schema
    .createTable('super_builds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('profile_id', 'text', (c) => c.notNull().references('super_profiles.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('artifact_blob_key', 'text')
    .addColumn('artifact_size', bigint)
    .addColumn('artifact_sha256', 'text')
    .addColumn('shared_blob_key', 'text')
    .addColumn('shared_size', bigint)
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('super_builds_task_profile', ['task_id', 'profile_id'])
    .execute();

  await schema
    .createTable('super_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('developer_account_id', 'text', (c) => c.notNull().references('developer_accounts.id').onDelete('cascade'))
    .addColumn('shared_blob_key', 'text', (c) => c.notNull())
    .addColumn('shared_size', bigint, (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('super_templates_task_account', ['task_id', 'developer_account_id'])
    .execute();

  await schema
    .createTable('super_enrollments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('distribution_id', 'text', (c) => c.notNull().references('distributions.id').onDelete('cascade'))
    .addColumn('challenge_hash', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('udid', 'text')
    .addColumn('product', 'text')
    .addColumn('os_version', 'text')
    .addColumn('device_name', 'text')
    .addColumn('developer_account_id', 'text', (c) => c.references('developer_accounts.id').onDelete('set null'))
    .addColumn('build_id', 'text', (c) => c.references('super_builds.id').onDelete('set null'))
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('super_enrollments_distribution').on('super_enrollments').columns(['distribution_id', 'udid']).execute();
}
