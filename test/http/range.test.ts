// `Range: bytes=…` parsing (RFC 9110 §14.1.2): single ranges, suffixes, clamping, refusals.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseRange } from '../../src/http/range.ts';

it('parses single byte ranges and clamps the end to the file', () => {
  assert.equal(parseRange(undefined, 100), null);
  assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=90-500', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 });
  assert.deepEqual(parseRange('BYTES = 5 - 5', 100), { start: 5, end: 5 });
});

it('answers unsatisfiable ranges with 416 and ignores what it does not support', () => {
  assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=50-10', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=-0', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=0-', 0), 'unsatisfiable');
  assert.equal(parseRange('bytes=0-1,5-6', 100), null, 'multiple ranges: the whole file');
  assert.equal(parseRange('items=0-1', 100), null);
  assert.equal(parseRange('bytes=-', 100), null);
});
