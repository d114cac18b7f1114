// The only place HTTP statuses live: every catalogue code maps to exactly one status. Service
// codes are listed one by one (the Record type makes a new service code without a status a
// compile error). Engine codes describe what is wrong with an uploaded package, certificate or
// profile, i.e. the client's input, so they are 422 unless listed in SIGNING_STATUS; an engine's
// own failure surfaces as signing_failed / verification_failed.
import { ERROR_CATALOGUE, type ErrorCode, type ServiceErrorCode } from '../errors.ts';
import { SIGNING_ERRORS, type SigningErrorCode } from '../signing/errors.ts';

const SERVICE_STATUS: Record<ServiceErrorCode, number> = {
  // Service
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  invalid_request: 400,
  rate_limited: 429,
  address_rate_limited: 429,
  password_attempts_exceeded: 429,
  request_timeout: 408,
  uri_too_long: 414,
  headers_too_large: 431,
  body_too_large: 413,
  task_quota_exceeded: 429,
  // 413 rather than 507: the account's quota is the client's limit, not the server's disk.
  storage_quota_exceeded: 413,
  file_too_large: 413,
  unsupported_file_type: 415,
  unsupported_media_type: 415,
  notes_too_large: 400,
  // tus 1.0 §Tus-Resumable: a request without a supported version is answered 412.
  tus_version_unsupported: 412,
  file_key_not_found: 404,
  file_key_expired: 410,
  cert_type_unsupported: 422,
  certificate_required: 422,
  certificate_not_found: 404,
  certificate_in_use: 409,
  certificate_revoked: 422,
  profile_kind_mismatch: 422,
  webhook_not_found: 404,
  rotation_not_found: 404,
  rotation_in_progress: 409,
  certificate_password_incorrect: 422,
  certificate_profile_required: 409,
  profile_not_found: 404,
  idempotency_conflict: 409,
  task_not_found: 404,
  task_not_cancelable: 409,
  artifact_not_ready: 409,
  range_not_satisfiable: 416,
  app_not_found: 404,
  icon_invalid: 422,
  distribution_not_found: 404,
  link_expired: 410,
  // Issue 6: expired, disabled and exhausted install links all answer 410 Gone.
  link_disabled: 410,
  download_quota_exceeded: 410,
  password_required: 401,
  signer_unavailable: 422,
  signing_failed: 500,
  task_attempts_exhausted: 500,
  webhook_failed: 502,
  service_unavailable: 503,
  // Super signature: Apple's refusals of the client's own account are the client's input (422);
  // Apple being unreachable or throttling is a gateway problem (502/503).
  developer_account_not_found: 404,
  developer_key_rejected: 422,
  developer_agreement_required: 422,
  developer_certificate_mismatch: 422,
  developer_certificate_unusable: 422,
  apple_rate_limited: 503,
  apple_unavailable: 502,
  apple_request_failed: 502,
  bundle_id_unavailable: 409,
  device_slots_exhausted: 409,
  device_ineligible: 422,
  device_pending_review: 409,
  device_udid_invalid: 400,
  udid_challenge_invalid: 410,
  device_response_invalid: 400,
  super_signing_unavailable: 501,
  insufficient_scope: 403,
  owner_required: 403,
  csrf_token_invalid: 403,
  session_expired: 401,
  credentials_invalid: 401,
  sign_in_throttled: 429,
  current_password_incorrect: 422,
  setup_token_invalid: 410,
  invitation_invalid: 410,
  password_reset_invalid: 410,
  email_taken: 409,
  member_not_found: 404,
  last_owner: 409,
  api_key_not_found: 404,
  invitation_not_found: 404,
  internal_error: 500,
};

const SIGNING_STATUS: Partial<Record<SigningErrorCode, number>> = {
  // The signer's own output failed its verifier (signing/pipeline): Signet's fault, not the input's.
  verification_failed: 500,
};

export const ERROR_STATUS: Record<ErrorCode, number> = {
  ...SERVICE_STATUS,
  ...(Object.fromEntries((Object.keys(SIGNING_ERRORS) as SigningErrorCode[]).map((code) => [code, SIGNING_STATUS[code] ?? 422])) as Record<SigningErrorCode, number>),
};

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}

/** Catalogue codes in catalogue order, with their status and description (README, OpenAPI). */
export function catalogueRows(): Array<{ code: ErrorCode; status: number; message: string }> {
  return (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).map((code) => ({ code, status: ERROR_STATUS[code], message: ERROR_CATALOGUE[code] }));
}
