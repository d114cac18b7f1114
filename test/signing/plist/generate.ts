// Deterministic generator of varied plist values for the oracle and round-trip tests.
import {
  plistArray,
  plistBoolean,
  plistData,
  plistDate,
  plistDict,
  plistInteger,
  plistReal,
  plistString,
  type PlistValue,
} from '../../../src/signing/plist/index.ts';

/** xorshift32: reproducible without a dependency. */
export function rng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

const INTEGERS = [0n, 1n, 5n, 14n, 15n, 255n, 256n, 65535n, 65536n, (1n << 32n) - 1n, 1n << 32n, (1n << 53n) + 1n,
  (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 1n, -1n, -128n, -129n, -(1n << 63n)];
const REALS = [0.5, 1, 100, 1000, 0.1, -2.5e-10, 1e300, 5e-324, 1.7976931348623157e308, 123456.789, -1e21, 1e-5, 3.141592653589793];
const PIECES = ['a', 'Z', ' ', '<', '>', '&', '"', "'", '\t', '\n', 'é', 'ß', '中', '😀', 'key', '.', '-', '0', '\u00a0', '\ufffd'];

export function randomString(next: () => number, max = 24): string {
  const length = Math.floor(next() * max);
  let out = '';
  for (let i = 0; i < length; i++) out += PIECES[Math.floor(next() * PIECES.length)]!;
  return out;
}

export function randomValue(next: () => number, depth = 0): PlistValue {
  const kind = Math.floor(next() * (depth >= 4 ? 7 : 9));
  switch (kind) {
    case 0: return plistString(randomString(next));
    case 1: return plistInteger(next() < 0.6 ? INTEGERS[Math.floor(next() * INTEGERS.length)]! : BigInt(Math.floor((next() - 0.5) * 2 ** 40)));
    case 2: return plistReal(next() < 0.6 ? REALS[Math.floor(next() * REALS.length)]! : (next() - 0.5) * 10 ** Math.floor(next() * 40 - 20));
    case 3: return plistBoolean(next() < 0.5);
    case 4: return plistDate(Math.floor((next() - 0.5) * 6e9)); // whole seconds, ~1811–2191
    case 5: {
      const bytes = new Uint8Array(next() < 0.1 ? 300 : Math.floor(next() * 40));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(next() * 256);
      return plistData(bytes);
    }
    case 6: return plistString(randomString(next, 3)); // short strings: shared by the binary writer
    case 7: {
      const count = next() < 0.15 ? 20 : Math.floor(next() * 6);
      return plistArray(Array.from({ length: count }, () => randomValue(next, depth + 1)));
    }
    default: {
      const count = next() < 0.15 ? 18 : Math.floor(next() * 6);
      const entries = new Map<string, PlistValue>();
      for (let i = 0; i < count; i++) entries.set(`${randomString(next, 6)}${i % 3 === 0 ? '' : i}`, randomValue(next, depth + 1));
      return plistDict(entries);
    }
  }
}
