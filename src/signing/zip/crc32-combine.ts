// CRC-32 of a concatenation from the CRC-32s of its parts (what zlib's crc32_combine computes;
// node:zlib exposes crc32 but not that). Hand-written: a dozen lines of arithmetic, no package.
//
// CRC-32 (ISO-HDLC, the zip CRC of APPNOTE 4.4.7) is a remainder modulo the polynomial P over
// GF(2) (bit-reflected here: bit 31 holds x^0, 0xedb88320 is P without its x^32 term). Appending
// n bytes to A multiplies A's remainder by x^(8n); the pre- and post-conditioning (the all-ones
// start and final inversion) cancel out, so crc(A ‖ B) = crc(A) · x^(8|B|) mod P ⊕ crc(B).
const POLY = 0xedb88320;
/** x^0 and x^8 in the reflected representation. */
const ONE = 0x80000000;
const X8 = 0x00800000;

// x^-8: P has a constant term, so x is invertible modulo P; x · 0xdb710641 = 1 (reflected), and
// this is that to the 8th power. crc32-combine.test.ts checks both.
const X8_INVERSE = 0x6567cb95;

/** CRC-32 of A ‖ B from crc(A), crc(B) and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multiplyModP(powerOf(X8, lengthB), crcA >>> 0) ^ crcB) >>> 0;
}

/**
 * CRC-32 of B, the middle of A ‖ B ‖ C, from crc(A ‖ B ‖ C), crc(A), crc(C) and the lengths of
 * B and C: crc32Combine undone for C (a multiplication by x^(-8|C|)), then for A.
 */
export function crc32Middle(crcWhole: number, crcA: number, crcC: number, lengthB: number, lengthC: number): number {
  const crcAB = multiplyModP(powerOf(X8_INVERSE, lengthC), (crcWhole ^ crcC) >>> 0);
  return (crcAB ^ multiplyModP(powerOf(X8, lengthB), crcA >>> 0)) >>> 0;
}

/** base^bytes mod P by squaring (base x^8 or x^-8: `power` runs through base, base^2, base^4, …). */
function powerOf(base: number, bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`length ${bytes} is not a byte count`);
  let result = ONE;
  let power = base;
  for (let n = bytes; n > 0; n = Math.floor(n / 2)) {
    if (n % 2 === 1) result = multiplyModP(result, power);
    power = multiplyModP(power, power);
  }
  return result;
}

/** a · b mod P, both reflected. */
function multiplyModP(a: number, b: number): number {
  let product = 0;
  for (let bit = ONE; bit !== 0; bit >>>= 1) {
    if ((a & bit) !== 0) product ^= b;
    // b · x: a shift towards the high powers (right, reflected), reduced by P when x^32 appears.
    b = (b & 1) !== 0 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return product >>> 0;
}
