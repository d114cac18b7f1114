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

/** CRC-32 of A ‖ B from crc(A), crc(B) and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (!Number.isSafeInteger(lengthB) || lengthB < 0) throw new RangeError(`length ${lengthB} is not a byte count`);
  // x^(8·lengthB) mod P by squaring: `power` runs through x^8, x^16, x^32, …
  let shift = ONE;
  let power = X8;
  for (let n = lengthB; n > 0; n = Math.floor(n / 2)) {
    if (n % 2 === 1) shift = multiplyModP(shift, power);
    power = multiplyModP(power, power);
  }
  return (multiplyModP(shift, crcA >>> 0) ^ crcB) >>> 0;
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
