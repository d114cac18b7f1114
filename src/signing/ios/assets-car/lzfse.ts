// LZFSE decoder (SPECIFICATION.md §4). Hand-written: npm has no maintained pure-JS LZFSE decoder.
// The block formats, tables and bit-stream rules follow Apple's BSD-licensed reference
// implementation (github.com/lzfse/lzfse: lzfse_internal.h, lzfse_decode_base.c, lzfse_fse.h);
// this is an independent TypeScript implementation of that documented format.
//
// A stream is a sequence of blocks, each starting with a 4-byte magic:
//   bvx$ end of stream · bvx- stored · bvxn LZVN · bvx1 / bvx2 LZFSE (FSE-coded literals + L/M/D)
// Every count and offset is checked before use, and the caller states the output size, so a
// hostile stream cannot make us allocate or write more than that.
import { SigningError } from '../../errors.ts';
import { lzvnDecodeInto } from './lzvn.ts';

const MAGIC_END = 0x24787662; // 'bvx$'
const MAGIC_RAW = 0x2d787662; // 'bvx-'
const MAGIC_V1 = 0x31787662; // 'bvx1'
const MAGIC_V2 = 0x32787662; // 'bvx2'
const MAGIC_LZVN = 0x6e787662; // 'bvxn'

// §4.3 alphabet sizes and FSE state counts (lzfse_internal.h: LZFSE_ENCODE_*).
const L_SYMBOLS = 20, M_SYMBOLS = 20, D_SYMBOLS = 64, LITERAL_SYMBOLS = 256;
const L_STATES = 64, M_STATES = 64, D_STATES = 256, LITERAL_STATES = 1024;
const MATCHES_PER_BLOCK = 10000;
const LITERALS_PER_BLOCK = 4 * MATCHES_PER_BLOCK;
// sizeof(lzfse_compressed_block_header_v1): 50 bytes of fields, 720 of frequencies, 2 of padding.
const V1_HEADER_SIZE = 772;

// §4.3 extra bits per L/M/D symbol; base values follow as running sums of 2^extra.
const L_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5, 8];
const M_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 5, 8, 11];
const D_EXTRA = Array.from({ length: 64 }, (_, i) => i >> 2);
const baseValues = (extra: number[]): number[] => {
  const base: number[] = [];
  let next = 0;
  for (const bits of extra) {
    base.push(next);
    next += 2 ** bits;
  }
  return base;
};
const L_BASE = baseValues(L_EXTRA), M_BASE = baseValues(M_EXTRA), D_BASE = baseValues(D_EXTRA);

function fail(why: string): never {
  throw new SigningError('asset_catalog_invalid', `LZFSE stream is corrupt: ${why}`);
}

/** Decodes a whole LZFSE stream whose decoded size is known (`expectedSize`), e.g. a CELM payload. */
export function lzfseDecode(src: Uint8Array, expectedSize: number): Buffer {
  const out = Buffer.alloc(expectedSize);
  let s = 0;
  let o = 0;
  for (;;) {
    if (s + 4 > src.length) fail('truncated before the end-of-stream block');
    const magic = readU32(src, s);
    if (magic === MAGIC_END) {
      if (o !== expectedSize) fail(`decoded ${o} bytes, expected ${expectedSize}`);
      return out;
    }
    if (s + 8 > src.length) fail('truncated block header');
    const rawBytes = readU32(src, s + 4);
    if (rawBytes > expectedSize - o) fail('a block decodes past the expected size');
    if (magic === MAGIC_RAW) {
      if (s + 8 + rawBytes > src.length) fail('stored block runs past the input');
      out.set(src.subarray(s + 8, s + 8 + rawBytes), o);
      s += 8 + rawBytes;
    } else if (magic === MAGIC_LZVN) {
      if (s + 12 > src.length) fail('truncated LZVN block header');
      const payload = readU32(src, s + 8);
      if (payload > src.length - s - 12) fail('LZVN block runs past the input');
      lzvnDecodeInto(src, s + 12, s + 12 + payload, out, o, rawBytes, 0);
      s += 12 + payload;
    } else if (magic === MAGIC_V1 || magic === MAGIC_V2) {
      const header = magic === MAGIC_V1 ? readV1Header(src, s) : readV2Header(src, s);
      decodeFseBlock(src, header, out, o);
      s = header.end;
    } else {
      fail(`unknown block magic 0x${magic.toString(16)} at ${s}`);
    }
    o += rawBytes;
  }
}

interface BlockHeader {
  rawBytes: number;
  literals: number;
  matches: number;
  literalPayload: number;
  lmdPayload: number;
  literalBits: number;
  literalStates: [number, number, number, number];
  lmdBits: number;
  lState: number;
  mState: number;
  dState: number;
  freqs: Uint16Array; // L(20) M(20) D(64) literal(256), in that order
  payloadStart: number;
  end: number;
}

// §4.2: the v1 header stores every field and frequency uncompressed.
function readV1Header(src: Uint8Array, s: number): BlockHeader {
  if (s + V1_HEADER_SIZE > src.length) fail('truncated v1 block header');
  const freqs = new Uint16Array(L_SYMBOLS + M_SYMBOLS + D_SYMBOLS + LITERAL_SYMBOLS);
  for (let i = 0; i < freqs.length; i++) freqs[i] = src[s + 50 + 2 * i]! | (src[s + 51 + 2 * i]! << 8);
  const literalPayload = readU32(src, s + 20);
  const lmdPayload = readU32(src, s + 24);
  return checkHeader(src, {
    rawBytes: readU32(src, s + 4), literals: readU32(src, s + 12), matches: readU32(src, s + 16),
    literalPayload, lmdPayload, literalBits: readI32(src, s + 28),
    literalStates: [readU16(src, s + 32), readU16(src, s + 34), readU16(src, s + 36), readU16(src, s + 38)],
    lmdBits: readI32(src, s + 40), lState: readU16(src, s + 44), mState: readU16(src, s + 46), dState: readU16(src, s + 48),
    freqs, payloadStart: s + V1_HEADER_SIZE, end: s + V1_HEADER_SIZE + literalPayload + lmdPayload,
  });
}

// §4.2: the v2 header packs the counts into three little-endian u64 and the frequencies into a
// variable-length code (lzfse_decode_base.c: lzfse_decode_v1_freq_value).
function readV2Header(src: Uint8Array, s: number): BlockHeader {
  if (s + 32 > src.length) fail('truncated v2 block header');
  // Each u64 is read as two u32 halves to stay exact in JavaScript numbers.
  const f0lo = readU32(src, s + 8), f0hi = readU32(src, s + 12);
  const f1lo = readU32(src, s + 16), f1hi = readU32(src, s + 20);
  const f2lo = readU32(src, s + 24), f2hi = readU32(src, s + 28);
  const bits = (lo: number, hi: number, offset: number, width: number): number => {
    if (offset >= 32) return Math.floor(hi / 2 ** (offset - 32)) % 2 ** width;
    const fromLo = Math.floor(lo / 2 ** offset) % 2 ** width;
    if (offset + width <= 32) return fromLo;
    return fromLo + (hi % 2 ** (offset + width - 32)) * 2 ** (32 - offset);
  };
  const headerSize = f2lo;
  if (headerSize < 32 || headerSize > src.length - s) fail('v2 header size out of range');
  const freqs = new Uint16Array(L_SYMBOLS + M_SYMBOLS + D_SYMBOLS + LITERAL_SYMBOLS);
  let p = s + 32;
  const end = s + headerSize;
  let accum = 0;
  let accumBits = 0;
  for (let i = 0; i < freqs.length; i++) {
    while (p < end && accumBits + 8 <= 32) {
      accum += src[p++]! * 2 ** accumBits;
      accumBits += 8;
    }
    const low5 = accum % 32;
    const [value, width] = freqCode(low5, accum);
    if (width > accumBits) fail('v2 frequency table is truncated');
    freqs[i] = value;
    accum = Math.floor(accum / 2 ** width);
    accumBits -= width;
  }
  if (accumBits >= 8 || p !== end) fail('v2 frequency table does not end at the header end');
  const literalPayload = bits(f0lo, f0hi, 20, 20);
  const lmdPayload = bits(f1lo, f1hi, 40, 20);
  return checkHeader(src, {
    rawBytes: readU32(src, s + 4), literals: bits(f0lo, f0hi, 0, 20), matches: bits(f0lo, f0hi, 40, 20),
    literalPayload, lmdPayload, literalBits: bits(f0lo, f0hi, 60, 3) - 7,
    literalStates: [bits(f1lo, f1hi, 0, 10), bits(f1lo, f1hi, 10, 10), bits(f1lo, f1hi, 20, 10), bits(f1lo, f1hi, 30, 10)],
    lmdBits: bits(f1lo, f1hi, 60, 3) - 7,
    lState: bits(f2lo, f2hi, 32, 10), mState: bits(f2lo, f2hi, 42, 10), dState: bits(f2lo, f2hi, 52, 10),
    freqs, payloadStart: end, end: end + literalPayload + lmdPayload,
  });
}

// The variable-length frequency code: 2, 3 or 5 bits for 0–7, 8 bits for 8–23, 14 bits for 24+.
function freqCode(low5: number, accum: number): [number, number] {
  const NBITS = [2, 3, 2, 5, 2, 3, 2, 8, 2, 3, 2, 5, 2, 3, 2, 14, 2, 3, 2, 5, 2, 3, 2, 8, 2, 3, 2, 5, 2, 3, 2, 14];
  const VALUES = [0, 2, 1, 4, 0, 3, 1, -1, 0, 2, 1, 5, 0, 3, 1, -1, 0, 2, 1, 6, 0, 3, 1, -1, 0, 2, 1, 7, 0, 3, 1, -1];
  const width = NBITS[low5]!;
  if (width === 8) return [8 + (Math.floor(accum / 16) % 16), 8];
  if (width === 14) return [24 + (Math.floor(accum / 16) % 1024), 14];
  return [VALUES[low5]!, width];
}

// §4.4 limits (lzfse_decode_base.c checks the same ones).
function checkHeader(src: Uint8Array, h: BlockHeader): BlockHeader {
  if (h.literals > LITERALS_PER_BLOCK || h.matches > MATCHES_PER_BLOCK) fail('block declares too many literals or matches');
  if (h.literalBits < -7 || h.literalBits > 0 || h.lmdBits < -7 || h.lmdBits > 0) fail('bit-stream padding out of range');
  if (h.literalStates.some((x) => x >= LITERAL_STATES) || h.lState >= L_STATES || h.mState >= M_STATES || h.dState >= D_STATES) {
    fail('initial FSE state out of range');
  }
  if (h.end > src.length) fail('block payload runs past the input');
  return h;
}

/** §4.5: FSE decoding table entries, packed as symbol/value base, bit count and state delta. */
interface FseTable {
  symbol: Int32Array; // symbol (literal table) or value base (L/M/D tables)
  bits: Uint8Array; // state bits k (literal table) or k + extra value bits
  extra: Uint8Array; // extra value bits (L/M/D tables only)
  delta: Int32Array;
}

function buildTable(states: number, freqs: Uint16Array, extra: number[] | null, base: number[] | null): FseTable {
  const t: FseTable = { symbol: new Int32Array(states), bits: new Uint8Array(states), extra: new Uint8Array(states), delta: new Int32Array(states) };
  const stateClz = Math.clz32(states);
  let total = 0;
  let at = 0;
  for (let sym = 0; sym < freqs.length; sym++) {
    const f = freqs[sym]!;
    if (f === 0) continue;
    total += f;
    if (total > states) fail('FSE frequencies exceed the state count');
    const k = Math.clz32(f) - stateClz; // smallest k with states <= f << k
    const j0 = ((2 * states) >> k) - f;
    const vbits = extra === null ? 0 : extra[sym]!;
    for (let j = 0; j < f; j++, at++) {
      t.symbol[at] = base === null ? sym : base[sym]!;
      t.extra[at] = vbits;
      if (j < j0) {
        t.bits[at] = k + vbits;
        t.delta[at] = ((f + j) << k) - states;
      } else {
        t.bits[at] = k - 1 + vbits;
        t.delta[at] = (j - j0) << (k - 1);
      }
    }
  }
  return t;
}

/**
 * §4.5: the backward bit stream. Bytes are consumed from the end of the payload towards its
 * start; `pull(n)` returns the next n bits. A 32-bit accumulator (as in the reference's 32-bit
 * build) keeps every value exact in JavaScript numbers. Like the reference, a refill may load
 * bytes that precede the payload (they are never pulled), but never before the source buffer.
 */
class BackwardBits {
  #src: Uint8Array;
  #start: number;
  #pos: number;
  #accum = 0;
  #bits = 0;

  constructor(src: Uint8Array, start: number, end: number, padding: number) {
    this.#src = src;
    this.#start = 0;
    // The final byte(s) hold `padding` (-7..0) unused high bits; load 4 bytes (3 if padding 0).
    const take = padding === 0 ? 3 : 4;
    if (end - start < take && end < take) fail('bit stream too short');
    this.#pos = end - take;
    for (let i = take - 1; i >= 0; i--) this.#accum = this.#accum * 256 + src[this.#pos + i]!;
    this.#bits = take * 8 + padding;
    if (this.#bits < 24 || this.#bits >= 32 || Math.floor(this.#accum / 2 ** this.#bits) !== 0) fail('bit stream padding is invalid');
  }

  /** Refills to at least 24 bits (the accumulator stays below 2^31, so int32 arithmetic is exact). */
  refill(): void {
    const bytes = (31 - this.#bits) >> 3;
    if (bytes === 0) return;
    if (this.#pos - bytes < this.#start) fail('bit stream underflow');
    this.#pos -= bytes;
    for (let i = bytes - 1; i >= 0; i--) this.#accum = (this.#accum << 8) | this.#src[this.#pos + i]!;
    this.#bits += bytes * 8;
  }

  pull(n: number): number {
    if (n > this.#bits) fail('bit stream exhausted');
    this.#bits -= n;
    const value = this.#accum >>> this.#bits;
    this.#accum &= (1 << this.#bits) - 1;
    return value;
  }
}

function decodeFseBlock(src: Uint8Array, h: BlockHeader, out: Buffer, outStart: number): void {
  const lFreq = h.freqs.subarray(0, 20), mFreq = h.freqs.subarray(20, 40), dFreq = h.freqs.subarray(40, 104);
  const litFreq = h.freqs.subarray(104, 360);
  const literalTable = buildTable(LITERAL_STATES, litFreq, null, null);
  const lTable = buildTable(L_STATES, lFreq, L_EXTRA, L_BASE);
  const mTable = buildTable(M_STATES, mFreq, M_EXTRA, M_BASE);
  const dTable = buildTable(D_STATES, dFreq, D_EXTRA, D_BASE);

  // Literals: four interleaved FSE states, one literal each per round (§4.6).
  const literalCount = (h.literals + 3) & ~3;
  const literals = new Uint8Array(literalCount);
  const litStart = h.payloadStart;
  const litIn = new BackwardBits(src, litStart, litStart + h.literalPayload, h.literalBits);
  const states = [...h.literalStates];
  for (let i = 0; i < literalCount; i++) {
    if ((i & 1) === 0) litIn.refill();
    const q = i & 3;
    const state = states[q]!;
    literals[i] = literalTable.symbol[state]!;
    states[q] = literalTable.delta[state]! + litIn.pull(literalTable.bits[state]!);
    if (states[q]! >= LITERAL_STATES || states[q]! < 0) fail('literal state out of range');
  }

  // L/M/D triples: copy L literals, then M bytes from D back (D = 0 repeats the last distance).
  // Matches may reach into earlier blocks of the same stream, so D is bounded by the whole output.
  const lmdStart = litStart + h.literalPayload;
  const lmdIn = new BackwardBits(src, lmdStart, lmdStart + h.lmdPayload, h.lmdBits);
  let lState = h.lState, mState = h.mState, dState = h.dState;
  const outEnd = outStart + h.rawBytes;
  let o = outStart;
  let lit = 0;
  let distance = 0;
  // One L/M/D value: pull state and extra bits together, split them (§4.5).
  const next = (table: FseTable, state: number, stateCount: number): number => {
    lmdIn.refill();
    const extraBits = table.extra[state]!;
    const both = lmdIn.pull(table.bits[state]!);
    const nextState = table.delta[state]! + (both >>> extraBits);
    if (nextState < 0 || nextState >= stateCount) fail('L/M/D state out of range');
    decoded = table.symbol[state]! + (both & ((1 << extraBits) - 1));
    return nextState;
  };
  let decoded = 0;
  for (let n = 0; n < h.matches; n++) {
    lState = next(lTable, lState, L_STATES);
    const l = decoded;
    mState = next(mTable, mState, M_STATES);
    const m = decoded;
    dState = next(dTable, dState, D_STATES);
    if (decoded !== 0) distance = decoded;
    if (lit + l > h.literals || o + l + m > outEnd) fail('L/M/D triple overflows the block');
    out.set(literals.subarray(lit, lit + l), o);
    lit += l;
    o += l;
    if (m > 0) {
      if (distance === 0 || distance > o) fail(`match distance ${distance} reaches before the start of the output`);
      if (distance >= m) {
        out.copyWithin(o, o - distance, o - distance + m);
        o += m;
      } else {
        // Overlapping match: it repeats the bytes it produces, so copy byte by byte.
        for (let i = 0; i < m; i++, o++) out[o] = out[o - distance]!;
      }
    }
  }
  if (o !== outEnd) fail(`block decodes to ${o - outStart} bytes, header says ${h.rawBytes}`);
}

function readU32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
}
function readI32(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);
}
function readU16(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8);
}
