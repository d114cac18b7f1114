// LZVN and LZFSE decoders: hand-assembled opcodes for every LZVN opcode class, the test encoder's
// streams, LZFSE block framing, and refusals (truncation, distances before the output, overflow,
// undefined opcodes, unknown blocks). FSE-coded 'bvx2' blocks are checked on real catalogs in
// real-catalogs.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SigningError } from '../../../../src/signing/errors.ts';
import { lzfseDecode, lzvnDecodeInto } from '../../../../src/signing/ios/assets-car/index.ts';
import { lzfseEncode, lzvnEncode } from '../../../support/assets-car-writer.ts';

const EOS = [0x06, 0, 0, 0, 0, 0, 0, 0];

function lzvn(bytes: number[], size: number): string {
  const out = Buffer.alloc(size);
  lzvnDecodeInto(Buffer.from(bytes), 0, bytes.length, out, 0, size);
  return out.toString('latin1');
}

const invalid = (pattern: RegExp) => (error: unknown): boolean => {
  assert.ok(error instanceof SigningError && error.code === 'asset_catalog_invalid', String(error));
  assert.match(error.message, pattern);
  return true;
};

describe('LZVN decoder', () => {
  it('decodes each opcode class', () => {
    // sml_l "abcd", sml_d L=0 M=3 D=4 → "abc"
    assert.equal(lzvn([0xe4, 0x61, 0x62, 0x63, 0x64, 0x00, 0x04, ...EOS], 7), 'abcdabc');
    // sml_d with 2 literals: LL=2, MMM=0 (M=3), D=2: "xy" then "xyx" (overlapping copy)
    assert.equal(lzvn([0x80, 0x02, 0x78, 0x79, ...EOS], 5), 'xyxyx');
    // med_d: 101LLMMM DDDDDDMM DDDDDDDD: L=1 M=3 D=1 → "z" + "zzz"
    assert.equal(lzvn([0xa8, 0x04, 0x00, 0x7a, ...EOS], 4), 'zzzz');
    // lrg_d: LLMMM111 + u16 D: L=1, M=4, D=1
    assert.equal(lzvn([0x4f, 0x01, 0x00, 0x71, ...EOS], 5), 'qqqqq');
    // pre_d (LLMMM110, previous distance) after sml_d; nop opcodes are skipped
    assert.equal(lzvn([0xe2, 0x61, 0x62, 0x00, 0x02, 0x0e, 0x16, 0x46, 0x63, ...EOS], 9), 'ababacaca');
    // sml_m (1111MMMM) and lrg_m (11110000 MMMMMMMM) reuse the previous distance
    assert.equal(lzvn([0xe1, 0x6b, 0x00, 0x01, 0xf2, 0xf0, 0x00, ...EOS], 22), 'k'.repeat(22));
    // lrg_l: 11100000 LLLLLLLL (L = n + 16)
    assert.equal(lzvn([0xe0, 0x01, ...Buffer.from('0123456789abcdefg'), ...EOS], 17), '0123456789abcdefg');
  });

  it('round-trips the test encoder', () => {
    const raw = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i % 7 === 0 ? i & 0xff : 0x42)));
    const out = Buffer.alloc(raw.length);
    lzvnDecodeInto(lzvnEncode(raw), 0, lzvnEncode(raw).length, out, 0, raw.length);
    assert.ok(out.equals(raw));
  });

  it('refuses corrupt streams', () => {
    assert.throws(() => lzvn([0xe4, 0x61, 0x62], 4), invalid(/literals run past/));
    assert.throws(() => lzvn([0xe2, 0x61, 0x62, 0x00, 0x05, ...EOS], 5), invalid(/distance 5/));
    assert.throws(() => lzvn([0xe4, 0x61, 0x62, 0x63, 0x64, ...EOS], 3), invalid(/overflow/));
    assert.throws(() => lzvn([0x1e, ...EOS], 0), invalid(/undefined opcode 0x1e/));
    assert.throws(() => lzvn([0x70, ...EOS], 0), invalid(/undefined opcode 0x70/));
    assert.throws(() => lzvn([0xe1, 0x61], 1), invalid(/end-of-stream/));
    assert.throws(() => lzvn([0xe1, 0x61, ...EOS], 2), invalid(/ends after 1 of 2/));
    assert.throws(() => lzvn([0xf3, ...EOS], 3), invalid(/distance 0/));
  });
});

describe('LZFSE decoder (block framing)', () => {
  it('decodes stored and LZVN blocks, with matches reaching into the previous block', () => {
    const raw = Buffer.from('the quick brown fox jumps over the lazy dog '.repeat(20));
    assert.ok(lzfseDecode(lzfseEncode(raw), raw.length).equals(raw));
    // An LZVN block whose first match copies from the stored block before it.
    const vn = [0x00, 0x04, ...EOS]; // sml_d L=0 M=3 D=4
    const stream = Buffer.concat([Buffer.from('bvx-'), u32(4), Buffer.from('wxyz'), Buffer.from('bvxn'), u32(3), u32(vn.length), Buffer.from(vn), Buffer.from('bvx$')]);
    assert.equal(lzfseDecode(stream, 7).toString(), 'wxyzwxy');
  });

  it('refuses unknown blocks, short or long output and truncation', () => {
    const good = lzfseEncode(Buffer.from('abcdefghabcdefgh'));
    assert.throws(() => lzfseDecode(Buffer.concat([Buffer.from('bvx9'), u32(0)]), 0), invalid(/unknown block magic/));
    assert.throws(() => lzfseDecode(good, 15), invalid(/past the expected size/));
    assert.throws(() => lzfseDecode(good, 17), invalid(/expected 17/));
    for (let n = 0; n < good.length; n++) assert.throws(() => lzfseDecode(good.subarray(0, n), 16), invalid(/./));
  });
});

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v, 0);
  return b;
}
