// Table types of migration 0008 (profiles per bundle, App IDs with capabilities); part of
// `Database` in ./schema.ts.
import type { Selectable } from 'kysely';

export interface CertificateProfilesTable {
  /** `prf_…` */
  id: string;
  certificate_id: string;
  account_id: string;
  /** The sealed .mobileprovision. */
  profile_sealed: string;
  /**
   * Which row the ciphertext is bound to: 'profile' (this row; every profile added since
   * migration 0008) or 'certificate' (the certificate row it was uploaded with, before 0008).
   */
  sealed_as: 'profile' | 'certificate';
  name: string | null;
  /** Null until first read for profiles carried over by migration 0008. */
  uuid: string | null;
  /** application-identifier, e.g. "TEAMID.com.example.*". */
  app_id: string | null;
  /** enterprise | ad-hoc | development | app-store */
  type: string | null;
  team_id: string | null;
  expires_at: string | null;
  /** JSON of the entitlements the profile grants (not secret); null like `uuid`. */
  entitlements_json: string | null;
  created_at: string;
}

/** registered: the App ID exists in the team; unavailable: another Apple team owns the identifier. */
export type DeveloperAppIdState = 'registered' | 'unavailable';

export interface DeveloperAppIdsTable {
  /** `dai_…` */
  id: string;
  developer_account_id: string;
  identifier: string;
  state: DeveloperAppIdState;
  asc_bundle_id: string | null;
  /** JSON array of the capability types enabled at Apple, as last seen. */
  capabilities_json: string;
  /** When Signet last enabled a capability: profiles made before do not grant it yet. */
  capabilities_changed_at: string | null;
  /** Why the App ID is unavailable (Apple's answer). */
  detail: string | null;
  created_at: string;
  updated_at: string;
}

export interface SuperTaskPlansTable {
  task_id: string;
  /** JSON of the task's SuperAppPlan (src/super-signature/capability-plan.ts). */
  plan_json: string;
  created_at: string;
}

export interface ProfileTables {
  certificate_profiles: CertificateProfilesTable;
  developer_app_ids: DeveloperAppIdsTable;
  super_task_plans: SuperTaskPlansTable;
}

export type CertificateProfileRow = Selectable<CertificateProfilesTable>;
export type DeveloperAppIdRow = Selectable<DeveloperAppIdsTable>;
