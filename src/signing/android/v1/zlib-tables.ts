// Constants and static Huffman tables of reference zlib's trees.c (Jean-loup Gailly, zlib
// licence) for zlib-trees.ts / zlib-deflate.ts: code lengths, extra bits, the fixed literal and
// distance trees, and the length/distance code maps (tr_static_init). Hand-written port: see
// zlib-deflate.ts for why Node's own zlib cannot be used.
export const MIN_MATCH = 3;
export const MAX_MATCH = 258;
// deflate.h lit_bufsize = 1 << (memLevel + 6).
export const LIT_BUFSIZE = 1 << (8 + 6);
// trees.c constants.
export const LENGTH_CODES = 29;
export const LITERALS = 256;
export const L_CODES = LITERALS + 1 + LENGTH_CODES;
export const D_CODES = 30;
export const BL_CODES = 19;
export const HEAP_SIZE = 2 * L_CODES + 1;
export const MAX_BITS = 15;
export const MAX_BL_BITS = 7;
export const END_BLOCK = 256;
export const REP_3_6 = 16;
export const REPZ_3_10 = 17;
export const REPZ_11_138 = 18;
export const EXTRA_LBITS = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
export const EXTRA_DBITS = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
export const EXTRA_BLBITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7];
export const BL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

// Trees are flat arrays: [2n] = frequency or code, [2n + 1] = parent ("dad") or bit length.
export interface StaticDesc {
  tree: Uint16Array | null;
  extraBits: readonly number[];
  extraBase: number;
  elems: number;
  maxLength: number;
}

export const staticLtree = new Uint16Array((L_CODES + 2) * 2);
export const staticDtree = new Uint16Array(D_CODES * 2);
export const distCode = new Uint8Array(512);
export const lengthCode = new Uint8Array(MAX_MATCH - MIN_MATCH + 1);
export const baseLength = new Int32Array(LENGTH_CODES);
export const baseDist = new Int32Array(D_CODES);

export function reverseBits(code: number, length: number): number {
  let result = 0;
  do {
    result |= code & 1;
    code >>>= 1;
    result <<= 1;
  } while (--length > 0);
  return result >>> 1;
}

export function generateCodes(tree: Uint16Array, maxCode: number, blCount: ArrayLike<number>): void {
  const nextCode = new Uint16Array(MAX_BITS + 1);
  let code = 0;
  for (let bits = 1; bits <= MAX_BITS; bits++) nextCode[bits] = code = (code + blCount[bits - 1]!) << 1;
  for (let n = 0; n <= maxCode; n++) {
    const length = tree[n * 2 + 1]!;
    if (length !== 0) tree[n * 2] = reverseBits(nextCode[length]!++, length);
  }
}

// trees.c tr_static_init, run once on first use (the tables are constants of the format).
let staticTablesReady = false;
export function initStaticTables(): void {
  if (staticTablesReady) return;
  staticTablesReady = true;
  let length = 0;
  let code = 0;
  for (code = 0; code < LENGTH_CODES - 1; code++) {
    baseLength[code] = length;
    for (let n = 0; n < 1 << EXTRA_LBITS[code]!; n++) lengthCode[length++] = code;
  }
  lengthCode[length - 1] = code;
  let dist = 0;
  for (code = 0; code < 16; code++) {
    baseDist[code] = dist;
    for (let n = 0; n < 1 << EXTRA_DBITS[code]!; n++) distCode[dist++] = code;
  }
  dist >>= 7;
  for (; code < D_CODES; code++) {
    baseDist[code] = dist << 7;
    for (let n = 0; n < 1 << (EXTRA_DBITS[code]! - 7); n++) distCode[256 + dist++] = code;
  }
  const blCount = new Uint16Array(MAX_BITS + 1);
  for (let n = 0; n <= 287; n++) {
    const bits = n <= 143 ? 8 : n <= 255 ? 9 : n <= 279 ? 7 : 8;
    staticLtree[n * 2 + 1] = bits;
    blCount[bits]!++;
  }
  generateCodes(staticLtree, L_CODES + 1, blCount);
  for (let n = 0; n < D_CODES; n++) {
    staticDtree[n * 2 + 1] = 5;
    staticDtree[n * 2] = reverseBits(n, 5);
  }
}

export const STATIC_L: StaticDesc = { tree: staticLtree, extraBits: EXTRA_LBITS, extraBase: LITERALS + 1, elems: L_CODES, maxLength: MAX_BITS };
export const STATIC_D: StaticDesc = { tree: staticDtree, extraBits: EXTRA_DBITS, extraBase: 0, elems: D_CODES, maxLength: MAX_BITS };
export const STATIC_BL: StaticDesc = { tree: null, extraBits: EXTRA_BLBITS, extraBase: 0, elems: BL_CODES, maxLength: MAX_BL_BITS };

export const dCode = (dist: number): number => (dist < 256 ? distCode[dist]! : distCode[256 + (dist >>> 7)]!);
