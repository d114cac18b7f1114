// LZVN decoder (SPECIFICATION.md §5). Hand-written: no maintained pure-JS LZVN decoder exists on
// npm. The opcode table follows Apple's BSD-licensed reference (github.com/lzfse/lzfse,
// src/lzvn_decode_base.c); this is an independent implementation of the documented format.
// Every opcode is bounds-checked against both the input and the declared output size, so a
// hostile stream can neither read past its end nor write past `out`.
import { SigningError } from '../../errors.ts';

/**
 * Decodes one LZVN stream from `src[start, end)` into `out[outStart, outStart + outLength)`.
 * Returns the number of input bytes consumed (through the end-of-stream opcode). The stream must
 * fill the output exactly. Matches may reach back to `windowStart` (earlier output of the same
 * stream, as in LZFSE's bvxn blocks), never before it.
 */
export function lzvnDecodeInto(src: Uint8Array, start: number, end: number, out: Uint8Array, outStart: number, outLength: number, windowStart = outStart): number {
  const fail = (why: string): never => {
    throw new SigningError('asset_catalog_invalid', `LZVN stream is corrupt: ${why}`);
  };
  const outEnd = outStart + outLength;
  let s = start;
  let o = outStart;
  let d = 0; // the previous match distance ("pre_d" opcodes reuse it)
  for (;;) {
    if (s >= end) fail('truncated before the end-of-stream opcode');
    const op = src[s]!;
    let literals = 0;
    let match = 0;
    let size = 1; // opcode bytes before the literals
    // §5.1 opcode classes, by bit pattern of the first byte.
    if (op === 0x06) {
      // eos: the opcode and 7 padding bytes.
      if (s + 8 > end) fail('truncated end-of-stream opcode');
      if (o !== outEnd) fail(`stream ends after ${o - outStart} of ${outLength} bytes`);
      return s + 8 - start;
    } else if (op === 0x0e || op === 0x16) {
      s += 1; // nop
      continue;
    } else if ((op & 0xf0) === 0x70 || (op & 0xf0) === 0xd0 || (op < 0x40 && (op & 7) === 6)) {
      fail(`undefined opcode 0x${op.toString(16)}`);
    } else if (op >= 0xa0 && op <= 0xbf) {
      // med_d: 101LLMMM DDDDDDMM DDDDDDDD
      if (s + 3 > end) fail('truncated med_d opcode');
      const b1 = src[s + 1]!, b2 = src[s + 2]!;
      literals = (op >> 3) & 3;
      match = (((op & 7) << 2) | (b1 & 3)) + 3;
      d = (b2 << 6) | (b1 >> 2);
      size = 3;
    } else if (op === 0xe0) {
      // lrg_l: 11100000 LLLLLLLL
      if (s + 2 > end) fail('truncated lrg_l opcode');
      literals = src[s + 1]! + 16;
      size = 2;
    } else if (op > 0xe0 && op <= 0xef) {
      literals = op & 15; // sml_l
    } else if (op === 0xf0) {
      // lrg_m: 11110000 MMMMMMMM
      if (s + 2 > end) fail('truncated lrg_m opcode');
      match = src[s + 1]! + 16;
      size = 2;
    } else if (op > 0xf0) {
      match = op & 15; // sml_m
    } else {
      // LLMMMxxx: sml_d (xxx < 6, one more distance byte), pre_d (6), lrg_d (7, u16 distance).
      literals = op >> 6;
      match = ((op >> 3) & 7) + 3;
      const low = op & 7;
      if (low === 7) {
        if (s + 3 > end) fail('truncated lrg_d opcode');
        d = src[s + 1]! | (src[s + 2]! << 8);
        size = 3;
      } else if (low < 6) {
        if (s + 2 > end) fail('truncated sml_d opcode');
        d = (low << 8) | src[s + 1]!;
        size = 2;
      }
    }
    s += size;
    if (literals > 0) {
      if (s + literals > end) fail('literals run past the end of the input');
      if (o + literals > outEnd) fail('literals overflow the declared size');
      out.set(src.subarray(s, s + literals), o);
      s += literals;
      o += literals;
    }
    if (match > 0) {
      if (d === 0 || d > o - windowStart) fail(`match distance ${d} reaches before the start of the output`);
      if (o + match > outEnd) fail('match overflows the declared size');
      // Byte by byte: a match may overlap the bytes it produces (distance < length).
      for (let i = 0; i < match; i++, o++) out[o] = out[o - d]!;
    }
  }
}
