// Table types of migration 0003 (super signature); part of `Database` in ./schema.ts.
import type { Selectable } from 'kysely';

/** ok | key_rejected | agreement_required | certificate_expired | certificate_revoked | unreachable */
export type DeveloperAccountHealth = 'ok' | 'key_rejected' | 'agreement_required' | 'certificate_expired' | 'certificate_revoked' | 'unreachable';

export interface DeveloperAccountsTable {
  id: string;
  account_id: string;
  name: string | null;
  issuer_id: string;
  key_id: string;
  /** SecretBox-sealed .p8 PEM. */
  p8_sealed: string;
  /** SecretBox-sealed PKCS#12 of the distribution identity. */
  p12_sealed: string;
  p12_password_sealed: string | null;
  team_id: string;
  certificate_subject: string;
  /** Upper-case hex, no leading zeros (compared with Apple's serialNumber). */
  certificate_serial: string;
  certificate_fingerprint: string;
  certificate_not_after: string;
  /** The certificate's resource id in App Store Connect (profiles reference it). */
  asc_certificate_id: string;
  health: DeveloperAccountHealth;
  health_detail: string | null;
  slots_per_class: number;
  /** JSON array of {id, identifier}: the team's App IDs as of the last sync (a lookup cache). */
  bundle_ids_json: string;
  checked_at: string;
  created_at: string;
  updated_at: string;
  /** The lifecycle health state last recorded (migration 0010; null until first computed). */
  health_state: string | null;
  health_changed_at: string | null;
}

/** `reserved` while Signet asks Apple; then Apple's status (ENABLED, DISABLED, PROCESSING, INELIGIBLE). */
export type DeveloperDeviceStatus = 'reserved' | 'ENABLED' | 'DISABLED' | 'PROCESSING' | 'INELIGIBLE' | (string & {});

export interface DeveloperDevicesTable {
  id: string;
  developer_account_id: string;
  /** Canonical UDID (upper case, hyphen kept). */
  udid: string;
  device_class: string;
  status: DeveloperDeviceStatus;
  asc_device_id: string | null;
  name: string | null;
  created_at: string;
  updated_at: string;
}

export interface SuperProfilesTable {
  id: string;
  developer_account_id: string;
  bundle_identifier: string;
  asc_bundle_id: string;
  asc_profile_id: string;
  uuid: string;
  name: string;
  /** The .mobileprovision, base64 (not secret: it is embedded in every build it signs). */
  content_b64: string;
  /** JSON array of the UDIDs the profile provisions. */
  udids_json: string;
  expires_at: string;
  /** Set when a newer profile of the same bucket replaced it (and it was deleted at Apple). */
  superseded_at: string | null;
  /** Set when the account's distribution certificate was replaced (migration 0014): its builds are re-made. */
  retired_at: string | null;
  /** The profiles made together for one app (its own and its extensions'): the app profile's id. Null: a profile on its own. */
  group_id: string | null;
  created_at: string;
}

export type SuperBuildState = 'signing' | 'ready' | 'failed';

export interface SuperBuildsTable {
  id: string;
  task_id: string;
  profile_id: string;
  state: SuperBuildState;
  artifact_blob_key: string | null;
  artifact_size: number | null;
  /** SHA-256 and size of the whole .ipa (shared part included). */
  artifact_sha256: string | null;
  /**
   * Incremental builds: the .ipa is this shared blob followed by artifact_blob_key (the
   * per-device part); artifact_size is the total. Null for whole-app builds.
   */
  shared_blob_key: string | null;
  shared_size: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

/** The shared part of incremental builds of one task for one developer account. */
export interface SuperTemplatesTable {
  id: string;
  task_id: string;
  developer_account_id: string;
  shared_blob_key: string;
  shared_size: number;
  created_at: string;
}

/** awaiting_device → queued → registering → signing → ready | failed */
export type EnrollmentState = 'awaiting_device' | 'queued' | 'registering' | 'signing' | 'ready' | 'failed';

export interface SuperEnrollmentsTable {
  id: string;
  distribution_id: string;
  /** Lowercase hex SHA-256 of the Profile Service challenge (the challenge itself is never stored). */
  challenge_hash: string;
  state: EnrollmentState;
  udid: string | null;
  product: string | null;
  os_version: string | null;
  device_name: string | null;
  developer_account_id: string | null;
  build_id: string | null;
  error_code: string | null;
  error_message: string | null;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

export interface SuperTables {
  developer_accounts: DeveloperAccountsTable;
  developer_devices: DeveloperDevicesTable;
  super_profiles: SuperProfilesTable;
  super_builds: SuperBuildsTable;
  super_enrollments: SuperEnrollmentsTable;
  super_templates: SuperTemplatesTable;
}

export type DeveloperAccountRow = Selectable<DeveloperAccountsTable>;
export type DeveloperDeviceRow = Selectable<DeveloperDevicesTable>;
export type SuperProfileRow = Selectable<SuperProfilesTable>;
export type SuperBuildRow = Selectable<SuperBuildsTable>;
export type EnrollmentRow = Selectable<SuperEnrollmentsTable>;
export type SuperTemplateRow = Selectable<SuperTemplatesTable>;
