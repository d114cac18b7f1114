// The iOS signers never hand out an output that does not verify: the whole-app verifier's
// verdict becomes `ipa_signature_invalid`, which the service reports as `verification_failed`
// (the signer's own failure), while other refusals keep their codes.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AppError } from '../../../src/errors.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { allProblems, assertIpaVerified, verifyIpa } from '../../../src/signing/ios/verify-ipa/index.ts';
import { asVerificationFailure } from '../../../src/services/signers/ios.ts';
import { tinyIpa } from '../../support/app-packages.ts';

it('an .ipa that does not verify is ipa_signature_invalid, reported by the service as verification_failed', async () => {
  const report = await verifyIpa(new BufferSource(tinyIpa()));
  assert.equal(report.verified, false);
  let refusal: unknown;
  try {
    assertIpaVerified(report, allProblems(report));
  } catch (error) {
    refusal = error;
  }
  assert.ok(refusal instanceof SigningError);
  assert.equal(refusal.code, 'ipa_signature_invalid');
  assert.match(refusal.message, /not a Mach-O file/);

  const mapped = asVerificationFailure(refusal);
  assert.ok(mapped instanceof AppError);
  assert.equal(mapped.code, 'verification_failed');
  assert.equal(mapped.cause, refusal);
});

it('other refusals keep their own codes', () => {
  const refusal = new SigningError('bundle_id_mismatch');
  assert.equal(asVerificationFailure(refusal), refusal);
});
