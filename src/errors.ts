// Signet's error catalogue: the service's codes plus the signing engines' codes
// (src/signing/errors.ts), one list. Every non-2xx HTTP body and every failed task carries one of
// these codes; src/http/error-status.ts maps them to HTTP statuses. Codes are stable API.
import { SIGNING_ERRORS, SigningError, type SigningErrorCode } from './signing/errors.ts';

export const SERVICE_ERRORS = {
  unauthorized: 'A valid API key (Authorization: Bearer sk_…) or console session is required.',
  not_found: 'No such route or resource.',
  method_not_allowed: 'The route does not accept this method.',
  invalid_request: 'The request is malformed or a field is missing or invalid.',
  rate_limited: 'Too many requests for this API key; retry after the time in Retry-After.',
  address_rate_limited: 'Too many requests from this address; retry after the time in Retry-After.',
  password_attempts_exceeded: 'Too many wrong passwords for this install link; wait for the time in Retry-After.',
  request_timeout: 'The request was not received in time (too slow or stalled).',
  uri_too_long: 'The request URL or one of its path segments is too long.',
  headers_too_large: 'The request headers are too large.',
  body_too_large: 'The request body exceeds the limit of this route.',
  task_quota_exceeded: 'The account has as many pending tasks as its quota allows; wait for some to finish.',
  storage_quota_exceeded: 'The account\'s stored files would exceed its storage quota; let uploads expire or delete tasks\' files first.',
  file_too_large: 'The upload exceeds the maximum size.',
  unsupported_file_type: 'Only .ipa and .apk files are accepted.',
  unsupported_media_type: 'The request body has an unsupported content type.',
  notes_too_large: 'The release notes exceed 10 KB (10,240 bytes of UTF-8).',
  tus_version_unsupported: 'Resumable uploads speak tus 1.0.0: send the header Tus-Resumable: 1.0.0.',
  file_key_not_found: 'No upload with this file_key.',
  file_key_expired: 'The upload behind this file_key has expired; upload the file again.',
  cert_type_unsupported: 'This cert_type cannot sign this kind of package.',
  certificate_required: 'No usable certificate for this task; upload one first.',
  certificate_not_found: 'No certificate with this id.',
  certificate_in_use: 'The certificate is used by pending tasks.',
  webhook_not_found: 'No webhook with this id.',
  rotation_not_found: 'No certificate rotation with this id.',
  rotation_in_progress: 'A rotation of this certificate is still re-signing its releases.',
  profile_kind_mismatch: 'The provisioning profile\'s type does not match the certificate kind (ios_enterprise: in-house, ios_adhoc: ad-hoc, ios_development: development).',
  certificate_revoked: 'The certificate was revoked by its issuer (OCSP); nothing signed with it will launch.',
  certificate_password_incorrect: 'The password does not open the certificate file.',
  certificate_profile_required: 'An iOS enterprise certificate keeps at least one provisioning profile; attach the replacement before removing the last one.',
  profile_not_found: 'No provisioning profile with this id on the certificate.',
  idempotency_conflict: 'This Idempotency-Key was used with a different request body.',
  task_not_found: 'No task with this id.',
  task_not_cancelable: 'The task has already finished.',
  artifact_not_ready: 'The task has no signed artifact (yet).',
  range_not_satisfiable: 'The requested byte range is outside the file.',
  app_not_found: 'No app with this id.',
  icon_invalid: 'The app icon cannot be converted to a standard PNG.',
  distribution_not_found: 'No distribution with this id.',
  link_expired: 'This install link has expired.',
  link_disabled: 'This install link has been disabled.',
  download_quota_exceeded: 'This install link has reached its download limit.',
  password_required: 'This install link is password protected.',
  signer_unavailable: 'No signing engine is available for this platform and certificate type.',
  signing_failed: 'Signing failed for an unexpected reason.',
  task_attempts_exhausted: 'The task was interrupted too many times.',
  webhook_failed: 'The webhook could not be delivered.',
  service_unavailable: 'The service is shutting down or not ready.',
  // Super signature (developer accounts, App Store Connect, UDID capture)
  developer_account_not_found: 'No developer account with this id.',
  developer_key_rejected: 'App Store Connect rejected the API key (issuer id, key id or .p8 is wrong, revoked, or lacks the Admin role).',
  developer_agreement_required: 'The Apple developer account must accept new agreements in App Store Connect first.',
  developer_certificate_mismatch: 'The .p12 certificate is not a current distribution certificate of this developer account.',
  developer_certificate_unusable: 'The developer account\'s distribution certificate has expired or was revoked.',
  apple_rate_limited: 'App Store Connect is rate-limiting this API key; try again later.',
  apple_unavailable: 'App Store Connect could not be reached or failed; try again later.',
  apple_request_failed: 'App Store Connect refused a request Signet made.',
  bundle_id_unavailable: 'The bundle identifier is registered by another Apple team.',
  device_slots_exhausted: 'No developer account has a free device slot for this device class.',
  device_ineligible: 'Apple refused to register this device.',
  device_pending_review: 'Apple is still reviewing this device registration (PROCESSING); try again later.',
  device_udid_invalid: 'The device identifier (UDID) is not valid.',
  udid_challenge_invalid: 'The device enrollment is unknown or has expired; download the profile again.',
  device_response_invalid: 'The device\'s signed response could not be verified.',
  super_signing_unavailable: 'Per-device re-signing of iOS apps is not available in this build of Signet.',
  // Console users, sessions and API-key scopes
  insufficient_scope: "The API key's scopes or your role in the account do not allow this request.",
  owner_required: 'Only an owner of the account can do this.',
  csrf_token_invalid: 'The X-CSRF-Token header is missing or does not match the console session; reload the console.',
  session_expired: 'The console session has expired or was signed out; sign in again.',
  credentials_invalid: 'The email or password is incorrect.',
  sign_in_throttled: 'Too many sign-in attempts; retry after the time in Retry-After.',
  current_password_incorrect: 'The current password is incorrect.',
  setup_token_invalid: 'The setup link is unknown, expired or already used.',
  invitation_invalid: 'The invitation is unknown, expired, revoked or already accepted.',
  password_reset_invalid: 'The password-reset link is unknown, expired or already used.',
  email_taken: 'A user with this email already exists.',
  member_not_found: 'No member with this id in the account.',
  last_owner: 'An account needs at least one owner.',
  api_key_not_found: 'No API key with this id.',
  invitation_not_found: 'No open invitation with this id.',
  internal_error: 'An unexpected error occurred.',
} as const;

export const ERROR_CATALOGUE = { ...SERVICE_ERRORS, ...SIGNING_ERRORS } as const;
export type ServiceErrorCode = keyof typeof SERVICE_ERRORS;
export type ErrorCode = ServiceErrorCode | SigningErrorCode;

/** A service-level failure with a catalogue code; `details` may name the offending field etc. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message ?? ERROR_CATALOGUE[code], options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options?.details;
  }
}

export { SigningError };

/** Any error carrying a catalogue code, from the service or an engine. */
export function errorCodeOf(error: unknown): ErrorCode | null {
  if (error instanceof AppError || error instanceof SigningError) return error.code;
  return null;
}
