// Shapes shared by every route: the success envelope, the error body, and the per-route error
// documentation that feeds both the response schemas and the OpenAPI document.
import { Type, type TSchema } from 'typebox';
import type { ErrorCode } from '../../errors.ts';
import { ERROR_CATALOGUE } from '../../errors.ts';
import { ERROR_STATUS } from '../error-status.ts';

export const ErrorBody = Type.Object(
  {
    code: Type.Integer({ description: 'The HTTP status, repeated.' }),
    error: Type.String({ description: 'Stable machine-readable code from the error catalogue.' }),
    message: Type.String({ description: 'What went wrong, for people.' }),
  },
  { additionalProperties: false },
);

/** `{code: 200, data}`: every success body. */
export function envelope<T extends TSchema>(data: T) {
  return Type.Object({ code: Type.Literal(200), data }, { additionalProperties: false });
}

/** Every authenticated route can fail with these. */
export const COMMON_ERRORS: readonly ErrorCode[] = ['unauthorized', 'rate_limited', 'invalid_request', 'internal_error'];

/**
 * The `response` part of a route schema: the success shape plus one entry per error status the
 * route can produce, each documenting its catalogue codes. Undeclared statuses would bypass the
 * serializer, so every status a route can answer with is declared here.
 */
export function responses(success: TSchema, errors: readonly ErrorCode[], options: { successStatus?: number; authenticated?: boolean } = {}): Record<string, TSchema> {
  const all = new Set<ErrorCode>([...(options.authenticated === false ? ['invalid_request', 'internal_error'] as ErrorCode[] : COMMON_ERRORS), ...errors]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, TSchema> = { [String(options.successStatus ?? 200)]: success };
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = Type.Object(ErrorBody.properties, {
      additionalProperties: false,
      description: codes.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c]}`).join('\n'),
      'x-error-codes': codes,
    });
  }
  return out;
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp.' });
export const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});
export const Platform = Type.Union([Type.Literal('ios'), Type.Literal('android')]);
export const CertType = Type.Union([Type.Literal('enterprise'), Type.Literal('super')], {
  description: '`enterprise`: in-house distribution certificate (iOS) or the Android keystore; `super`: iOS ad-hoc signing with device registration.',
});
export const AppIdentity = {
  bundle_id: NullableString('iOS bundle identifier or Android package name.'),
  name: NullableString('Display name.'),
  version: NullableString('CFBundleShortVersionString / versionName.'),
  build: NullableString('CFBundleVersion / versionCode.'),
};
