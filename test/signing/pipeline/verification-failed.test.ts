// The whole-app verifier's verdict on a signed .ipa: a failure is `ipa_signature_invalid` listing
// every problem; on Signet's own output (signing/pipeline) it becomes `verification_failed`, the
// signer's failure, with the verdict as its cause. Other refusals keep their own codes.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { allProblems, assertIpaVerified, verifyIpa } from '../../../src/signing/ios/verify-ipa/index.ts';
import { assertOutputVerified } from '../../../src/signing/pipeline/verdict.ts';
import { tinyIpa } from '../../support/app-packages.ts';

it('an .ipa that does not verify is ipa_signature_invalid; as the pipeline\'s own output, verification_failed', async () => {
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

  let mapped: unknown;
  try {
    assertOutputVerified(report);
  } catch (error) {
    mapped = error;
  }
  assert.ok(mapped instanceof SigningError);
  assert.equal(mapped.code, 'verification_failed');
  assert.ok(mapped.cause instanceof SigningError && mapped.cause.code === 'ipa_signature_invalid');
  assert.deepEqual(mapped.details?.problems, allProblems(report));
});
