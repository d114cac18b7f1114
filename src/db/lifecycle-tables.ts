// Table types of migration 0010 (certificate lifecycle); part of `Database` in ./schema.ts.
import type { Selectable } from 'kysely';

/**
 * good | revoked | unknown: the responder's answer; unchecked: not asked yet; not_applicable:
 * the certificate names no OCSP responder (self-signed Android keys); error: asking failed
 * (`reason` says why). Only an answer the responder signed is ever `revoked`.
 */
export type RevocationStatus = 'good' | 'revoked' | 'unknown' | 'unchecked' | 'not_applicable' | 'error';

export interface RevocationChecksTable {
  /** Lowercase hex SHA-256 of the certificate DER (certificates.fingerprint). */
  fingerprint: string;
  /** The certificate, base64 DER (public: it is embedded in every build it signs). */
  certificate_der: string;
  /** The issuing CA certificate, base64 DER (public); null while it could not be found. */
  issuer_der: string | null;
  ocsp_url: string | null;
  status: RevocationStatus;
  /** Why the status is not a responder's answer (error, unknown), for people. */
  reason: string | null;
  checked_at: string | null;
  /** The answer's validity (RFC 6960 §4.2.2.1); it is reused until next_update. */
  this_update: string | null;
  next_update: string | null;
  revoked_at: string | null;
  revocation_reason: string | null;
  created_at: string;
}

/** Account webhooks (migration 0011). */
export interface AccountWebhooksTable {
  /** `whk_…` */
  id: string;
  account_id: string;
  url: string;
  /** JSON array of the event types it receives. */
  events_json: string;
  state: 'enabled' | 'disabled';
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** One event of an account (what webhooks receive; the console's recent alerts). */
export interface AccountEventsTable {
  /** `evt_…` */
  id: string;
  account_id: string;
  type: string;
  /** The certificate, developer account, task or distribution it is about. */
  subject_id: string;
  /** JSON of the event's data as it was when it happened. */
  data_json: string;
  created_at: string;
}

/** One row per delivery attempt of an event to a webhook. */
export interface AccountWebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
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

/** A certificate rotation (migration 0012). */
export interface RotationsTable {
  /** `rot_…` */
  id: string;
  account_id: string;
  from_certificate_id: string;
  to_certificate_id: string;
  created_at: string;
}

/**
 * running: its task signs; done: the link serves the new build; failed: the task failed (the
 * link keeps the old build); skipped: the link stopped being live before its turn.
 */
export type RotationItemState = 'running' | 'done' | 'failed' | 'skipped';

export interface RotationItemsTable {
  rotation_id: string;
  distribution_id: string;
  old_task_id: string;
  new_task_id: string | null;
  state: RotationItemState;
  error: string | null;
  updated_at: string;
}

export interface LifecycleTables {
  rotations: RotationsTable;
  rotation_items: RotationItemsTable;
  revocation_checks: RevocationChecksTable;
  account_webhooks: AccountWebhooksTable;
  account_events: AccountEventsTable;
  account_webhook_deliveries: AccountWebhookDeliveriesTable;
}

export type RevocationCheckRow = Selectable<RevocationChecksTable>;
export type AccountWebhookRow = Selectable<AccountWebhooksTable>;
export type AccountEventRow = Selectable<AccountEventsTable>;
export type AccountWebhookDeliveryRow = Selectable<AccountWebhookDeliveriesTable>;
export type RotationRow = Selectable<RotationsTable>;
export type RotationItemRow = Selectable<RotationItemsTable>;
