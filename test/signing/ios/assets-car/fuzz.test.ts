// The Assets.car mutation fuzzer (assets-car-fuzz.ts), time-boxed for `npm test`; run it longer
// with `npm run fuzz:assets-car`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runFuzz } from './assets-car-fuzz.ts';

describe('Assets.car reader fuzzing', () => {
  it('refuses mutated catalogs with catalogue codes only, and never hangs', () => {
    const result = runFuzz({ cases: 4000, seed: 0x5ca1ab1e, budgetMs: 6000 });
    console.log('assets-car fuzz:', JSON.stringify({ cases: result.cases, decoded: result.decoded, refused: result.refused, slowestMs: Math.round(result.slowestMs) }));
    assert.deepEqual(result.failures.slice(0, 5), []);
    assert.ok(result.cases >= 150, `only ${result.cases} cases ran`);
    assert.ok(result.decoded > 0 && Object.keys(result.refused).length > 0, 'the mutations produce both decodes and refusals');
  });
});
