// App Store Connect failures (Apple, "Parsing the Error Response Code"; distribution-protocols.md
// §3.2.4). Apple asks clients to branch on `code` only, but several business conditions (a
// duplicate device, the device cap, a bundle id taken by another team, a revoked certificate) share
// one code (ENTITY_ERROR…) and differ only in `detail`. Those text matchers live in ONE table
// here, each with a test, so a wording change at Apple breaks one visible line.
import { AppError, type ErrorCode } from '../errors.ts';

export interface AscErrorItem {
  status: string;
  code: string;
  title: string;
  detail: string;
}

/** Business conditions recognised in an error's `detail` (case-insensitive). */
export type AscCondition =
  | 'device_exists'
  | 'device_limit'
  | 'device_udid_invalid'
  | 'bundle_id_taken'
  | 'certificate_not_current'
  | 'devices_not_current'
  | 'bundle_id_missing'
  | 'profile_name_taken';

export const DETAIL_MATCHERS: ReadonlyArray<readonly [AscCondition, RegExp]> = [
  // "A device with number '<udid>' already exists on this team." (fastlane#17429, #20551)
  ['device_exists', /device with number .* already exists/i],
  // "...reached the maximum number of registered iPhone devices" (flyapps)
  ['device_limit', /maximum number of registered/i],
  // "An invalid value '<udid>' was provided for the parameter 'udid'." (bitrise steps #130)
  ['device_udid_invalid', /invalid value .* parameter 'udid'/i],
  // "An App ID with Identifier '…' is not available. Please enter a different string."
  ['bundle_id_taken', /App ID with Identifier .* is not available/i],
  // "There are no current certificates on this team matching the provided certificate IDs"
  ['certificate_not_current', /no current certificates on this team/i],
  // "There are no current ios devices on this team matching the provided device IDs"
  ['devices_not_current', /no current .*devices on this team/i],
  // "There is no App ID with ID …"
  ['bundle_id_missing', /There is no App ID with ID/i],
  // "Multiple profiles found with the name …" / a profile with this name already exists
  ['profile_name_taken', /(multiple profiles found with the name|profile with (this|the) name .*already exists)/i],
];

/** A non-2xx answer from App Store Connect, decoded from its ErrorResponse. */
export class AscApiError extends Error {
  readonly status: number;
  readonly errors: AscErrorItem[];
  readonly condition: AscCondition | null;

  constructor(status: number, errors: AscErrorItem[], method: string, path: string) {
    const first = errors[0];
    super(`App Store Connect ${method} ${path} answered ${status}${first ? ` ${first.code}: ${first.detail || first.title}` : ''}`);
    this.name = 'AscApiError';
    this.status = status;
    this.errors = errors;
    this.condition = conditionOf(errors);
  }

  get code(): string {
    return this.errors[0]?.code ?? '';
  }

  get detail(): string {
    return this.errors.map((e) => e.detail || e.title).join(' ');
  }
}

export function conditionOf(errors: readonly AscErrorItem[]): AscCondition | null {
  for (const error of errors) {
    for (const [condition, pattern] of DETAIL_MATCHERS) if (pattern.test(error.detail)) return condition;
  }
  return null;
}

/** Decodes an ErrorResponse body loosely (undocumented extras such as resultCode are ignored). */
export function parseErrorBody(body: unknown): AscErrorItem[] {
  const list = (body as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(list)) return [];
  return list.map((item: Record<string, unknown>) => ({
    status: String(item.status ?? ''),
    code: typeof item.code === 'string' ? item.code : '',
    title: typeof item.title === 'string' ? item.title : '',
    detail: typeof item.detail === 'string' ? item.detail : '',
  }));
}

/** The catalogue code an App Store Connect failure means for Signet's caller. */
export function catalogueCodeOf(error: AscApiError): ErrorCode {
  if (error.status === 401) return 'developer_key_rejected';
  if (error.status === 403) return error.code.includes('REQUIRED_AGREEMENTS') ? 'developer_agreement_required' : 'developer_key_rejected';
  if (error.status === 429) return 'apple_rate_limited';
  if (error.status >= 500) return 'apple_unavailable';
  switch (error.condition) {
    case 'device_limit':
      return 'device_slots_exhausted';
    case 'device_udid_invalid':
      return 'device_udid_invalid';
    case 'bundle_id_taken':
      return 'bundle_id_unavailable';
    case 'certificate_not_current':
      return 'developer_certificate_unusable';
    default:
      return 'apple_request_failed';
  }
}

/** The AppError to surface for an App Store Connect failure (message keeps Apple's detail). */
export function toAppError(error: AscApiError): AppError {
  const code = catalogueCodeOf(error);
  return new AppError(code, error.message, { cause: error, details: { apple_status: error.status, apple_code: error.code, ...(error.condition ? { condition: error.condition } : {}) } });
}
