// The initial schema (see ../schema.ts for what each column means). Timestamps are ISO-8601 TEXT
// on both dialects; byte sizes use the dialect's 64-bit integer type.
import { type Kysely, type SqlBool, sql } from 'kysely';
import { DIALECT_FEATURES, type DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const { bigintType } = DIALECT_FEATURES[dialect];
  const schema = db.schema;

  await schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('webhook_secret_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('label', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();

  await schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('bundle_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('apps_identity', ['account_id', 'platform', 'bundle_id'])
    .execute();
  await schema.createIndex('apps_account_updated').on('apps').columns(['account_id', 'updated_at', 'id']).execute();

  await schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('size', bigintType, (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.references('apps.id').onDelete('set null'))
    .addColumn('bundle_id', 'text')
    .addColumn('app_name', 'text')
    .addColumn('app_version', 'text')
    .addColumn('app_build', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('uploads_app').on('uploads').columns(['app_id', 'created_at', 'id']).execute();
  await schema.createIndex('uploads_expires').on('uploads').column('expires_at').execute();

  await schema
    .createTable('certificates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('material_sealed', 'text', (c) => c.notNull())
    .addColumn('certificate_sealed', 'text')
    .addColumn('password_sealed', 'text')
    .addColumn('key_password_sealed', 'text')
    .addColumn('key_alias', 'text')
    .addColumn('profile_sealed', 'text')
    .addColumn('subject', 'text')
    .addColumn('team_id', 'text')
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('not_before', 'text')
    .addColumn('not_after', 'text')
    .addColumn('profile_name', 'text')
    .addColumn('profile_app_id', 'text')
    .addColumn('profile_type', 'text')
    .addColumn('profile_expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('certificates_account').on('certificates').columns(['account_id', 'created_at', 'id']).execute();

  await schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    // No foreign key: the upload row expires (sweeper) while the task and its history remain.
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addColumn('input_blob_key', 'text', (c) => c.notNull())
    .addColumn('input_filename', 'text', (c) => c.notNull())
    .addColumn('certificate_id', 'text', (c) => c.references('certificates.id').onDelete('set null'))
    .addColumn('cert_type', 'text', (c) => c.notNull())
    .addColumn('options_json', 'text', (c) => c.notNull())
    .addColumn('callback_url', 'text')
    .addColumn('app_id', 'text', (c) => c.references('apps.id').onDelete('set null'))
    .addColumn('bundle_id', 'text')
    .addColumn('app_name', 'text')
    .addColumn('app_version', 'text')
    .addColumn('app_build', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('artifact_blob_key', 'text')
    .addColumn('artifact_size', bigintType)
    .addColumn('artifact_sha256', 'text')
    .addColumn('verification_json', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await schema.createIndex('tasks_account_created').on('tasks').columns(['account_id', 'created_at', 'id']).execute();
  await schema
    .createIndex('tasks_account_status_created')
    .on('tasks')
    .columns(['account_id', 'status', 'created_at', 'id'])
    .execute();
  await schema.createIndex('tasks_app_created').on('tasks').columns(['app_id', 'created_at', 'id']).execute();
  await schema.createIndex('tasks_upload').on('tasks').column('upload_id').execute();
  await schema.createIndex('tasks_certificate').on('tasks').columns(['certificate_id', 'status']).execute();

  await schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await schema.createIndex('webhook_deliveries_task').on('webhook_deliveries').columns(['task_id', 'created_at']).execute();

  await schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
  await schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();

  await schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload_json', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('job_key', 'text')
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('lease_token', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Partial indexes keep claim and sweep O(log n) however many finished jobs pile up: the measured
  // difference was 37,850 vs 601 claims/s against a single index with an OR predicate.
  await schema
    .createIndex('jobs_queued')
    .on('jobs')
    .columns(['run_at', 'id'])
    .where(sql.ref('state'), '=', sql.lit('queued'))
    .execute();
  await schema
    .createIndex('jobs_running')
    .on('jobs')
    .column('locked_until')
    .where(sql.ref('state'), '=', sql.lit('running'))
    .execute();
  await schema
    .createIndex('jobs_queued_key')
    .on('jobs')
    .column('job_key')
    .unique()
    .where(sql<SqlBool>`state = 'queued' and job_key is not null`)
    .execute();
}
