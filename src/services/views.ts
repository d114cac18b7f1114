// The API's view of stored rows: one function per resource, so every route (and every webhook
// body) shows a resource the same way. Secrets never leave through here: certificate views carry
// metadata only.
import type { AppRow, CertificateRow, TaskRow, TaskStatus, UploadRow, WebhookDeliveryRow, Platform } from '../db/schema.ts';

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
  webhook_deliveries: WebhookDeliveryView[];
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
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
  profile: { name: string | null; app_id: string | null; type: string | null; expires_at: string | null } | null;
  created_at: string;
}

export interface AppSummaryView {
  app_id: string;
  platform: Platform;
  bundle_id: string;
  name: string | null;
  created_at: string;
  updated_at: string;
}

export interface AppDetailView extends AppSummaryView {
  uploads: UploadView[];
  tasks: TaskView[];
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
export function taskView(row: TaskRow, baseUrl: string, deliveries: readonly WebhookDeliveryRow[] = []): TaskView {
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
    webhook_deliveries: deliveries.map(webhookDeliveryView),
    created_at: row.created_at,
    updated_at: row.updated_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

export function certificateView(row: CertificateRow): CertificateView {
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
    profile:
      row.kind === 'ios_enterprise'
        ? { name: row.profile_name, app_id: row.profile_app_id, type: row.profile_type, expires_at: row.profile_expires_at }
        : null,
    created_at: row.created_at,
  };
}

export function appSummaryView(row: AppRow): AppSummaryView {
  return { app_id: row.id, platform: row.platform, bundle_id: row.bundle_id, name: row.name, created_at: row.created_at, updated_at: row.updated_at };
}
