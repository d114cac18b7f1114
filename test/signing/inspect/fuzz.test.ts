// inspectPackage on damaged archives: seeded byte flips in real APK/IPA files must end in a
// result or SigningError('invalid_package') with a reason — the upload API's 422 — never in
// another exception. (The AXML parsers have their own, deeper campaign in android/axml.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { inspectPackage } from '../../../src/signing/inspect/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';

describe('inspectPackage fuzzing', needsSharedFixtures(), () => {
  it('refuses 1000 damaged packages with invalid_package and a reason', async () => {
    const inputs = ['android/apksig/golden/original.apk', 'ios/fastlane/ipas/very-capable-app.ipa'].map((f) => readFileSync(sharedFixture(f)!));
    let x = 0x1bad5eed;
    const next = (): number => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x; };
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const input = Buffer.from(inputs[i % inputs.length]!);
      for (let k = 0, n = 1 + (next() % 6); k < n; k++) input[next() % input.length] = next() & 0xff;
      let outcome = 'ok';
      try {
        await inspectPackage(new BufferSource(input), { iconBytes: false });
      } catch (error) {
        if (!(error instanceof SigningError) || error.code !== 'invalid_package' || typeof error.details?.reason !== 'string') {
          assert.fail(`case ${i}: ${(error as Error).stack}`);
        }
        outcome = error.details.reason;
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    console.log('inspect fuzz outcomes:', Object.fromEntries(outcomes));
    assert.ok(outcomes.size >= 2, 'the mutations produce both results and refusals');
  });
});
