// Kysely table types for Signet's database, identical on SQLite and PostgreSQL.
// Conventions that hold on both dialects (so the same queries run on both):
// - ids are TEXT with a type prefix (src/db/ids.ts): acc_, key_, tmp_ (file_key), app_, tsk_, crt_, whd_.
// - timestamps are TEXT holding `Date#toISOString()` (UTC, fixed width), so they sort and compare
//   as strings; no timezone or bigint-epoch conversions differ between drivers.
// - byte sizes are BIGINT (2 GiB does not fit an INT4); the pg pool parses int8 to number
//   (src/db/database.ts) so both dialects yield numbers.
// - no booleans (SQLite has none): small TEXT enums instead.
// - secrets (private keys, passwords, profiles, webhook secrets) are sealed by SecretBox and stored
//   as TEXT (base64), never in the clear.
import type { Selectable } from 'kysely';
import type { DistributionTables } from './distribution-tables.ts';
import type { LifecycleTables } from './lifecycle-tables.ts';
import type { ProfileTables } from './profile-tables.ts';
import type { SuperTables } from './super-tables.ts';
import type { UserTables } from './user-tables.ts';
import type { Platform } from '../signing/platform.ts';

export type { Platform };
/** How a task signs: with an enterprise certificate (iOS, Android) or per device (iOS super signature). */
export type CertType = 'enterprise' | 'super';
export type TaskStatus = 'pending' | 'processing' | 'succeeded' | 'failed' | 'canceled';
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['succeeded', 'failed', 'canceled'];
/**
 * ios_enterprise: an in-house (enterprise) distribution certificate with in-house profiles;
 * ios_adhoc: an iOS distribution certificate with ad-hoc profiles (installs on listed devices);
 * ios_development: a development certificate with development profiles; android: a keystore.
 */
export type CertificateKind = 'ios_enterprise' | 'ios_adhoc' | 'ios_development' | 'android';
export const IOS_CERTIFICATE_KINDS: readonly CertificateKind[] = ['ios_enterprise', 'ios_adhoc', 'ios_development'];
/** The provisioning profile type (ProfileSummary.type) each iOS kind holds. */
export const PROFILE_TYPE_OF_KIND: Readonly<Record<string, string>> = { ios_enterprise: 'enterprise', ios_adhoc: 'ad-hoc', ios_development: 'development' };
export type JobState = 'queued' | 'running' | 'failed';

export interface AccountsTable {
  id: string;
  name: string; // unique
  /** SecretBox-sealed per-account secret that signs webhook bodies (HMAC). */
  webhook_secret_sealed: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  label: string | null;
  /** Lowercase hex SHA-256 of the full `sk_…` key; the key itself is never stored. Unique. */
  key_hash: string;
  /** First characters of the key (`sk_AbCd`), to recognise it in listings. */
  key_prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Space-separated scopes (src/services/scopes.ts); keys made before migration 0006 have all. */
  scopes: string;
  /** After this time the key is refused; null: never expires. */
  expires_at: string | null;
  /** The console user who made it (null: the CLI or first start). */
  created_by: string | null;
}

export interface UploadsTable {
  /** The file_key handed to clients: `tmp_` + url-safe random characters. */
  id: string;
  account_id: string;
  filename: string;
  platform: Platform;
  size: number;
  sha256: string;
  blob_key: string;
  /** Set once the package was inspected and grouped into an app. */
  app_id: string | null;
  bundle_id: string | null;
  app_name: string | null;
  app_version: string | null;
  app_build: string | null;
  created_at: string;
  expires_at: string;
  /** Release notes given with the upload (migration 0007); a task without its own takes them. */
  notes: string | null;
}

export interface AppsTable {
  id: string;
  account_id: string;
  platform: Platform;
  /** iOS CFBundleIdentifier / Android package name; unique per (account, platform). */
  bundle_id: string;
  /** Latest display name seen. */
  name: string | null;
  created_at: string;
  updated_at: string;
}

export interface TasksTable {
  id: string;
  account_id: string;
  status: TaskStatus;
  platform: Platform;
  /** The file_key the task was created from (the upload row may have expired since). */
  upload_id: string;
  /** Input blob, kept by the task so an expiring file_key does not pull it away. */
  input_blob_key: string;
  input_filename: string;
  certificate_id: string | null;
  cert_type: CertType;
  /** JSON object of signing options (bundle id/name overrides…), owned by the HTTP layer. */
  options_json: string;
  callback_url: string | null;
  app_id: string | null;
  bundle_id: string | null;
  app_name: string | null;
  app_version: string | null;
  app_build: string | null;
  attempts: number;
  max_attempts: number;
  error_code: string | null;
  error_message: string | null;
  artifact_blob_key: string | null;
  artifact_size: number | null;
  artifact_sha256: string | null;
  /** JSON array of verifier summaries (SignResult.verification). */
  verification_json: string | null;
  /** JSON array of TaskBundle: which profile (or App ID) signed which bundle. */
  bundles_json: string | null;
  /** JSON array of TaskWarning: what signing left out and why. */
  warnings_json: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** The release notes of the release this task publishes (migration 0007). */
  notes: string | null;
}

export interface CertificatesTable {
  id: string;
  account_id: string;
  kind: CertificateKind;
  name: string | null;
  /** Sealed PKCS#12 (iOS) or keystore / PEM key (Android). */
  material_sealed: string;
  /** Sealed certificate PEM/DER when an Android key was uploaded on its own. */
  certificate_sealed: string | null;
  password_sealed: string | null;
  key_password_sealed: string | null;
  key_alias: string | null;
  /** Sealed .mobileprovision (iOS). */
  profile_sealed: string | null;
  subject: string | null;
  team_id: string | null;
  /** Lowercase hex SHA-256 of the signing certificate's DER. */
  fingerprint: string;
  not_before: string | null;
  not_after: string | null;
  profile_name: string | null;
  profile_app_id: string | null;
  profile_type: string | null;
  profile_expires_at: string | null;
  created_at: string;
  /** The health state last recorded (migration 0010; null until first computed). */
  health_state: string | null;
  health_changed_at: string | null;
}

/** One row per delivery ATTEMPT, so the task can show every try with its outcome. */
export interface WebhookDeliveriesTable {
  id: string;
  task_id: string;
  account_id: string;
  event: string;
  url: string;
  attempt: number;
  outcome: 'delivered' | 'failed' | 'refused';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  /** Lowercase hex SHA-256 of the canonical request body. */
  request_hash: string;
  task_id: string;
  created_at: string;
}

/** The embedded job queue (TableJobQueue). Unused when graphile-worker runs the queue. */
export interface JobsTable {
  id: string;
  kind: string;
  payload_json: string;
  state: JobState;
  job_key: string | null;
  run_at: string;
  attempts: number;
  max_attempts: number;
  /** Identifies the current run; fences heartbeats/completion of a run whose lease was swept. */
  lease_token: string | null;
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** Every table; later migrations' tables are declared beside them (distribution-tables.ts). */
export interface Database extends DistributionTables, SuperTables, ProfileTables, UserTables, LifecycleTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  uploads: UploadsTable;
  apps: AppsTable;
  tasks: TasksTable;
  certificates: CertificatesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  idempotency_keys: IdempotencyKeysTable;
  jobs: JobsTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type UploadRow = Selectable<UploadsTable>;
export type AppRow = Selectable<AppsTable>;
export type TaskRow = Selectable<TasksTable>;
export type CertificateRow = Selectable<CertificatesTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
export type JobRow = Selectable<JobsTable>;

/** A signed bundle in a task's answer: its App ID and the profile that signed it. */
export interface TaskBundle {
  /** Path in the .ipa ("Payload/A.app/PlugIns/W.appex/"). */
  path: string;
  bundleId: string;
  /** The App ID the bundle was signed for ("TEAMID.com.example.app", "TEAMID.*"). */
  applicationIdentifier: string;
  /** Enterprise: the certificate's profile that signed it. Super: null (each device has its own). */
  profile: { id: string | null; name: string; uuid: string; type: string; expiresAt: string } | null;
  /** Super signature: the App Store Connect capabilities enabled on the bundle's App ID. */
  capabilities: string[];
}

/** Something the user should know about a signed package: what was left out, and why. */
export interface TaskWarning {
  code: 'entitlement_left_out';
  message: string;
  bundleId: string;
  entitlement: string;
  /**
   * not_granted / value_not_granted / needs_app_value: the profile does not grant it;
   * identifiers_not_creatable: it names app groups, iCloud containers or merchant ids the App
   * Store Connect API cannot create; no_capability: no capability of the API grants it.
   */
  reason: string;
}
