import { SigningError } from '../errors.ts';
import type { InvalidPackageReason } from './invalid-package.ts';

/** An `invalid_package` error whose details carry a stable machine-readable reason. */
export function refuse(reason: InvalidPackageReason, message: string, extra?: { cause?: unknown; details?: Record<string, unknown> }): SigningError {
  return new SigningError('invalid_package', message, {
    cause: extra?.cause,
    details: { reason, ...extra?.details },
  });
}
