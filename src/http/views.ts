// The API's view of what services return (rows and domain records): one function per resource,
// so every route (and every webhook body, through the function main hands the webhook service)
// shows a resource the same way. Services never build these shapes. Secrets never leave through
// here: certificate views carry metadata only.
import type { CertificateProfileRow } from '../db/profile-tables.ts';
import type { DeveloperAccountHealth } from '../db/super-tables.ts';
import type { CertificateRow, TaskBundle, TaskRow, TaskStatus, TaskWarning, UploadRow, WebhookDeliveryRow, Platform } from '../db/schema.ts';
import type { AppDetail, AppSummary, Release } from '../services/apps.ts';
import type { CertificateRecord, UploadWarning } from '../services/certificates.ts';
import type { InvitationLookup } from '../services/invitations.ts';
import type { InvitationRow, Role } from '../db/user-tables.ts';
import type { MemberRow } from '../db/repositories/users.ts';
import type { DeveloperAccountRecord } from '../services/developer-accounts.ts';
import type { HealthView } from '../services/certificate-health.ts';
import type { TaskRecord } from '../services/tasks.ts';
import type { TaskLinksView } from '../distribution/service.ts';

export interface AppIdentityView {
  bundle_id: string | null;
  name: string | null;
  version: string | null;
  build: string | null;
}

export interface UploadView extends AppIdentityView {
  file_key: string;
  file_name: string;
  /** Bytes. */
  size: number;
  sha256: string;
  platform: Platform;
  app_id: string | null;
  created_at: string;
  expires_at: string;
  /** Release notes given with the upload (plain text or Markdown). */
  notes: string | null;
}

export interface WebhookDeliveryView {
  event: string;
  attempt: number;
  outcome: 'delivered' | 'failed' | 'refused';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  at: string;
}

export interface TaskView {
  task_id: string;
  status: TaskStatus;
  platform: Platform;
  cert_type: string;
  file_key: string;
  file_name: string;
  certificate_id: string | null;
  callback_url: string | null;
  app_id: string | null;
  app: AppIdentityView;
  attempts: number;
  max_attempts: number;
  error: { code: string; message: string } | null;
  artifact: { size: number; sha256: string; download_url: string } | null;
  verification: string[] | null;
  /** Which profile (or App ID) signed which bundle; null until the task succeeded. */
  bundles: TaskBundleView[] | null;
  /** What signing left out and why. */
  warnings: TaskWarningView[];
  webhook_deliveries: WebhookDeliveryView[];
  /** Release notes of the release this task publishes (plain text or Markdown). */
  notes: string | null;
  /** The install links once the task succeeded; null before (or when publishing failed). */
  links: TaskLinksView | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** Where a succeeded task's release is installed from (defined beside the install links). */
export type { TaskLinksView } from '../distribution/service.ts';

export interface TaskBundleView {
  path: string;
  bundle_id: string;
  application_identifier: string;
  profile: { id: string | null; name: string; uuid: string; type: string; expires_at: string } | null;
  capabilities: string[];
}

export interface TaskWarningView {
  code: TaskWarning['code'];
  message: string;
  bundle_id: string | null;
  entitlement: string | null;
  reason: string | null;
}

export interface CertificateProfileView {
  id: string;
  name: string | null;
  uuid: string | null;
  /** application-identifier, e.g. "TEAMID.com.example.app" or "TEAMID.*". */
  app_id: string | null;
  type: string | null;
  team_id: string | null;
  expires_at: string | null;
  /** The entitlements the profile grants. */
  entitlements: Record<string, unknown> | null;
  created_at: string;
}

export interface CertificateView {
  id: string;
  kind: CertificateRow['kind'];
  name: string | null;
  subject: string | null;
  team_id: string | null;
  fingerprint: string;
  alias: string | null;
  not_before: string | null;
  not_after: string | null;
  /** The first of `profiles` (kept for clients written when a certificate had one profile). */
  profile: { name: string | null; app_id: string | null; type: string | null; expires_at: string | null } | null;
  /** iOS: every provisioning profile of the certificate, oldest first; Android: empty. */
  profiles: CertificateProfileView[];
  /** Install links signed with it that can still be used. */
  live_links: number;
  /** Dates, profiles and revocation (OCSP) summed up; see certificate-health.ts. */
  health: HealthView;
  /** Upload answers only: what was accepted but needs attention (e.g. a profile about to expire). */
  warnings?: UploadWarning[];
  created_at: string;
}

export interface AppRowView {
  app_id: string;
  platform: Platform;
  bundle_id: string;
  name: string | null;
  created_at: string;
  updated_at: string;
}

export interface ReleaseView {
  distribution_id: string;
  task_id: string;
  version: string | null;
  build: string | null;
  url: string | null;
  downloads: number;
  enabled: boolean;
  created_at: string;
  /** Release notes (plain text or Markdown). */
  notes: string | null;
}

export interface AppSummaryView extends AppRowView {
  icon_url: string | null;
  app_url: string | null;
  qr_code_url: string | null;
  latest_release: ReleaseView | null;
  downloads: number;
}

export interface AppDetailView extends AppSummaryView {
  uploads: UploadView[];
  tasks: TaskView[];
  releases: ReleaseView[];
  downloads_by_day: Array<{ day: string; downloads: number }>;
}

export function uploadView(row: UploadRow): UploadView {
  return {
    file_key: row.id,
    file_name: row.filename,
    size: row.size,
    sha256: row.sha256,
    platform: row.platform,
    app_id: row.app_id,
    bundle_id: row.bundle_id,
    name: row.app_name,
    version: row.app_version,
    build: row.app_build,
    created_at: row.created_at,
    expires_at: row.expires_at,
    notes: row.notes,
  };
}

function webhookDeliveryView(row: WebhookDeliveryRow): WebhookDeliveryView {
  return {
    event: row.event,
    attempt: row.attempt,
    outcome: row.outcome,
    status_code: row.status_code,
    error: row.error,
    duration_ms: row.duration_ms,
    at: row.created_at,
  };
}

/** `baseUrl` is the public base (no trailing slash) the artifact link is built on. */
export function taskView(row: TaskRow, baseUrl: string, deliveries: readonly WebhookDeliveryRow[] = [], links: TaskLinksView | null = null): TaskView {
  const artifact =
    row.status === 'succeeded' && row.artifact_size !== null && row.artifact_sha256 !== null
      ? { size: row.artifact_size, sha256: row.artifact_sha256, download_url: `${baseUrl}/v1/tasks/${row.id}/artifact` }
      : null;
  return {
    task_id: row.id,
    status: row.status,
    platform: row.platform,
    cert_type: row.cert_type,
    file_key: row.upload_id,
    file_name: row.input_filename,
    certificate_id: row.certificate_id,
    callback_url: row.callback_url,
    app_id: row.app_id,
    app: { bundle_id: row.bundle_id, name: row.app_name, version: row.app_version, build: row.app_build },
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    artifact,
    verification: row.verification_json ? (JSON.parse(row.verification_json) as string[]) : null,
    bundles: row.bundles_json ? (JSON.parse(row.bundles_json) as TaskBundle[]).map(taskBundleView) : null,
    warnings: row.warnings_json ? (JSON.parse(row.warnings_json) as TaskWarning[]).map(taskWarningView) : [],
    webhook_deliveries: deliveries.map(webhookDeliveryView),
    notes: row.notes,
    links,
    created_at: row.created_at,
    updated_at: row.updated_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

function taskBundleView(bundle: TaskBundle): TaskBundleView {
  const p = bundle.profile;
  return {
    path: bundle.path,
    bundle_id: bundle.bundleId,
    application_identifier: bundle.applicationIdentifier,
    profile: p ? { id: p.id, name: p.name, uuid: p.uuid, type: p.type, expires_at: p.expiresAt } : null,
    capabilities: bundle.capabilities,
  };
}

function taskWarningView(warning: TaskWarning): TaskWarningView {
  return { code: warning.code, message: warning.message, bundle_id: warning.bundleId ?? null, entitlement: warning.entitlement ?? null, reason: warning.reason ?? null };
}

export function certificateProfileView(row: CertificateProfileRow): CertificateProfileView {
  return {
    id: row.id,
    name: row.name,
    uuid: row.uuid,
    app_id: row.app_id,
    type: row.type,
    team_id: row.team_id,
    expires_at: row.expires_at,
    entitlements: row.entitlements_json === null ? null : (JSON.parse(row.entitlements_json) as Record<string, unknown>),
    created_at: row.created_at,
  };
}

/** The certificate with its provisioning profiles (oldest first, iOS), usable install links signed with it and its health. */
export function certificateView({ certificate: row, profiles, liveLinks, health, warnings }: CertificateRecord): CertificateView {
  const first = profiles[0];
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    subject: row.subject,
    team_id: row.team_id,
    fingerprint: row.fingerprint,
    alias: row.key_alias,
    not_before: row.not_before,
    not_after: row.not_after,
    profile: row.kind !== 'android' ? { name: first?.name ?? null, app_id: first?.app_id ?? null, type: first?.type ?? null, expires_at: first?.expires_at ?? null } : null,
    profiles: profiles.map(certificateProfileView),
    live_links: liveLinks,
    health,
    created_at: row.created_at,
    ...(warnings !== undefined && warnings.length > 0 ? { warnings } : {}),
  };
}

export function taskRecordView(record: TaskRecord, baseUrl: string): TaskView {
  return taskView(record.task, baseUrl, record.deliveries, record.links);
}

/** The `status` event of GET /tasks/{id}/events. */
export function taskStatusEvent(task: TaskRow): { task_id: string; status: TaskStatus; attempts: number; max_attempts: number; at: string } {
  return { task_id: task.id, status: task.status, attempts: task.attempts, max_attempts: task.max_attempts, at: task.updated_at };
}

export function releaseView(release: Release): ReleaseView {
  const d = release.distribution;
  return {
    distribution_id: d.id,
    task_id: d.task_id,
    version: release.version,
    build: release.build,
    url: release.url,
    downloads: d.downloads,
    enabled: d.enabled === 'yes',
    created_at: d.created_at,
    notes: release.notes,
  };
}

export function appSummaryView(summary: AppSummary): AppSummaryView {
  const row = summary.app;
  return {
    app_id: row.id,
    platform: row.platform,
    bundle_id: row.bundle_id,
    name: row.name,
    created_at: row.created_at,
    updated_at: row.updated_at,
    icon_url: summary.iconUrl,
    app_url: summary.appUrl,
    qr_code_url: summary.qrCodeUrl,
    latest_release: summary.latestRelease === null ? null : releaseView(summary.latestRelease),
    downloads: summary.downloads,
  };
}

/** `baseUrl`: the public base the tasks' artifact links are built on. */
export function appDetailView(detail: AppDetail, baseUrl: string): AppDetailView {
  return {
    ...appSummaryView(detail),
    uploads: detail.uploads.map(uploadView),
    tasks: detail.tasks.map((record) => taskRecordView(record, baseUrl)),
    releases: detail.releases.map(releaseView),
    downloads_by_day: detail.downloadsByDay,
  };
}

export interface DeveloperAccountView {
  id: string;
  name: string | null;
  issuer_id: string;
  key_id: string;
  team_id: string;
  certificate: { subject: string; serial_number: string; expires_at: string };
  health: DeveloperAccountHealth;
  health_detail: string | null;
  /** The distribution certificate's lifecycle health (dates and revocation), like a certificate's `health`. */
  certificate_health: HealthView;
  usable: boolean;
  slots: DeveloperAccountRecord['slots'];
  checked_at: string;
  created_at: string;
}

export function developerAccountView({ account: row, usable, slots, certificateHealth }: DeveloperAccountRecord): DeveloperAccountView {
  return {
    id: row.id,
    name: row.name,
    issuer_id: row.issuer_id,
    key_id: row.key_id,
    team_id: row.team_id,
    certificate: { subject: row.certificate_subject, serial_number: row.certificate_serial, expires_at: row.certificate_not_after },
    health: row.health,
    health_detail: row.health_detail,
    certificate_health: certificateHealth,
    usable,
    slots,
    checked_at: row.checked_at,
    created_at: row.created_at,
  };
}

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  created_at: string;
  expires_at: string;
}

export interface InvitationLookupView {
  account_name: string;
  email: string;
  role: Role;
  /** The email already has a user: accepting asks for their password instead of a new one. */
  user_exists: boolean;
  expires_at: string;
}

export function invitationView(row: InvitationRow): InvitationView {
  return { id: row.id, email: row.email, role: row.role, created_at: row.created_at, expires_at: row.expires_at };
}

export function invitationLookupView(lookup: InvitationLookup): InvitationLookupView {
  return { account_name: lookup.accountName, email: lookup.email, role: lookup.role, user_exists: lookup.userExists, expires_at: lookup.expiresAt };
}

export interface MemberView {
  user_id: string;
  email: string;
  name: string | null;
  role: Role;
  joined_at: string;
}

export function memberView(member: MemberRow): MemberView {
  return { user_id: member.user_id, email: member.email, name: member.name, role: member.role, joined_at: member.created_at };
}
