// The verifier's verdict on Signet's own .ipa output, one way for every path that writes one:
// the whole-app signing pipeline (sign-ios.ts) and super signature's incremental device builds.
import { SigningError } from '../errors.ts';
import { allProblems, assertIpaVerified, type IpaVerification } from '../ios/verify-ipa/index.ts';

/**
 * Refuses an output its verifier rejects. The verifier's verdict (ipa_signature_invalid, every
 * problem in details) on Signet's own output means the signer failed, not the input:
 * verification_failed, with the verdict as its cause.
 */
export function assertOutputVerified(verification: IpaVerification): void {
  try {
    assertIpaVerified(verification, allProblems(verification));
  } catch (error) {
    if (error instanceof SigningError) throw new SigningError('verification_failed', error.message, { cause: error, details: error.details ?? {} });
    throw error;
  }
}
