// crc32Combine against node:zlib's crc32 of the joined bytes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { crc32Combine } from '../../../src/signing/zip/crc32-combine.ts';

describe('crc32Combine', () => {
  it('gives the CRC-32 of the concatenation, for empty, small and large parts', () => {
    const sizes = [0, 1, 3, 4, 7, 64, 4095, 65_536, 1_000_003];
    for (const a of sizes) {
      for (const b of sizes) {
        const left = randomBytes(a);
        const right = randomBytes(b);
        assert.equal(crc32Combine(crc32(left), crc32(right), b), crc32(Buffer.concat([left, right])), `${a} + ${b} bytes`);
      }
    }
  });

  it('handles lengths past 32 bits (the shift is computed, not looped)', () => {
    // crc(A ‖ zeros(n)) combined stepwise equals one combine with the summed length.
    const a = crc32(Buffer.from('signet'));
    const zeros = crc32(Buffer.alloc(1024 * 1024));
    let stepwise = a;
    for (let i = 0; i < 4096; i++) stepwise = crc32Combine(stepwise, zeros, 1024 * 1024);
    // 4 GiB of zeros has a CRC of its own; combining it at once must agree with the steps.
    let zeros4g = 0;
    for (let i = 0; i < 4096; i++) zeros4g = crc32Combine(zeros4g, zeros, 1024 * 1024);
    assert.equal(crc32Combine(a, zeros4g, 4 * 1024 ** 3), stepwise);
  });

  it('refuses a length that is not a byte count', () => {
    assert.throws(() => crc32Combine(0, 0, -1), RangeError);
    assert.throws(() => crc32Combine(0, 0, 1.5), RangeError);
  });
});
