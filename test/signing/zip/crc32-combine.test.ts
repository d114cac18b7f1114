// crc32Combine and crc32Middle against node:zlib's crc32 of the joined bytes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { crc32Combine, crc32Middle } from '../../../src/signing/zip/crc32-combine.ts';

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

describe('crc32Middle', () => {
  it("gives the CRC-32 of the middle part from the whole's and the ends'", () => {
    const sizes = [0, 1, 5, 4096, 65_537, 1_000_003];
    for (const a of sizes) {
      for (const b of sizes) {
        for (const c of sizes) {
          const [head, middle, tail] = [randomBytes(a), randomBytes(b), randomBytes(c)];
          const whole = crc32(Buffer.concat([head, middle, tail]));
          assert.equal(crc32Middle(whole, crc32(head), crc32(tail), b, c), crc32(middle), `${a} + ${b} + ${c} bytes`);
        }
      }
    }
  });

  it('undoes crc32Combine for lengths past 32 bits', () => {
    const head = crc32(Buffer.from('head'));
    const middle = crc32(Buffer.from('the middle'));
    const tail = crc32(Buffer.from('tail'));
    const long = 5 * 1024 ** 3 + 7;
    // A "tail" of `long` bytes whose CRC we pretend to know: any value works, the algebra is linear.
    const whole = crc32Combine(crc32Combine(head, middle, 10), tail, long);
    assert.equal(crc32Middle(whole, head, tail, 10, long), middle);
  });

  it('reflects a changed byte of the whole in the middle it gives', () => {
    const [head, middle, tail] = [randomBytes(100), randomBytes(5000), randomBytes(300)];
    const joined = Buffer.concat([head, middle, tail]);
    joined[2000]! ^= 1;
    assert.notEqual(crc32Middle(crc32(joined), crc32(head), crc32(tail), 5000, 300), crc32(middle));
  });
});
