// Short run of the Mach-O fuzzer (test/signing/ios/macho-fuzz.ts; `npm run fuzz` runs 100 000).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { needsSharedFixtures } from '../../../support/fixtures.ts';
import { runFuzz } from '../macho-fuzz.ts';

describe('Mach-O fuzzing', needsSharedFixtures(), () => {
  for (const seed of [1, 20260321]) {
    it(`1500 mutated fixtures (seed ${seed}) are signed validly or refused with a catalogue code`, () => {
      const result = runFuzz({ cases: 1500, seed });
      assert.deepEqual(result.failures, []);
      assert.equal(result.cases, 1500);
      // Both outcomes must actually occur, or the mutations are too weak / too strong.
      assert.ok(result.signed > 100, `only ${result.signed} signed`);
      assert.ok((result.refused.macho_invalid ?? 0) > 100, JSON.stringify(result.refused));
    });
  }
});
