// Typed property-list model shared by every plist reader/writer in Signet (XML, binary, DER).
// Hand-written: no npm plist library keeps integers beyond 2^53, keeps <real>1</real> distinct
// from <integer>1</integer>, and round-trips binary plists exactly (research: node-stack.md §4).
//
// Ranges follow CoreFoundation: integers are CFNumbers, i.e. -2^63 … 2^64-1 (binary plists store
// values ≥ 2^63 as 16-byte integers); dates are CFAbsoluteTime (float64 seconds since
// 2001-01-01T00:00:00Z), kept as that exact double so a binary plist's sub-second dates survive.
import { SigningError } from '../errors.ts';

export interface PlistString { readonly type: 'string'; value: string }
export interface PlistInteger { readonly type: 'integer'; value: bigint }
export interface PlistReal { readonly type: 'real'; value: number }
export interface PlistBoolean { readonly type: 'boolean'; value: boolean }
/** `value` is CFAbsoluteTime: seconds since 2001-01-01T00:00:00Z, any float64. */
export interface PlistDate { readonly type: 'date'; value: number }
/** Parsers produce Buffers (a Uint8Array subclass) that never alias the input. */
export interface PlistData { readonly type: 'data'; value: Uint8Array }
/** NSKeyedArchiver UID (binary plists only; XML writes it as Apple does, `{CF$UID: n}`). */
export interface PlistUid { readonly type: 'uid'; value: bigint }
export interface PlistArray { readonly type: 'array'; value: PlistValue[] }
/** Keys keep their order of insertion (the order read from the file). */
export interface PlistDict { readonly type: 'dict'; value: Map<string, PlistValue> }

export type PlistValue =
  | PlistString
  | PlistInteger
  | PlistReal
  | PlistBoolean
  | PlistDate
  | PlistData
  | PlistUid
  | PlistArray
  | PlistDict;

export type PlistType = PlistValue['type'];
export type PlistOfType<T extends PlistType> = Extract<PlistValue, { type: T }>;

export const INT_MIN = -(1n << 63n);
export const INT_MAX = (1n << 64n) - 1n;
export const UID_MAX = (1n << 64n) - 1n;
/** Milliseconds between 1970-01-01 and 2001-01-01 (CFAbsoluteTime epoch). */
export const APPLE_EPOCH_MS = 978_307_200_000;

export function plistString(value: string): PlistString {
  return { type: 'string', value };
}

/** Integers in CoreFoundation's range -2^63 … 2^64-1; a `number` must be a safe integer. */
export function plistInteger(value: bigint | number): PlistInteger {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new SigningError('plist_invalid', `plist integer ${value} is not a safe integer; pass a bigint`);
  }
  const big = BigInt(value);
  checkIntegerRange(big);
  return { type: 'integer', value: big };
}

export function checkIntegerRange(value: bigint): void {
  if (value < INT_MIN || value > INT_MAX) {
    throw new SigningError('plist_invalid', `plist integer ${value} is outside -2^63 … 2^64-1`);
  }
}

export function plistReal(value: number): PlistReal {
  return { type: 'real', value };
}

export function plistBoolean(value: boolean): PlistBoolean {
  return { type: 'boolean', value };
}

/** From a JS Date (millisecond precision) or directly from CFAbsoluteTime seconds. */
export function plistDate(value: Date | number): PlistDate {
  const seconds = typeof value === 'number' ? value : (value.getTime() - APPLE_EPOCH_MS) / 1000;
  if (!Number.isFinite(seconds)) throw new SigningError('plist_invalid', 'plist date is not a finite time');
  return { type: 'date', value: seconds };
}

export function dateToJs(date: PlistDate): Date {
  return new Date(date.value * 1000 + APPLE_EPOCH_MS);
}

export function plistData(value: Uint8Array): PlistData {
  return { type: 'data', value };
}

export function plistUid(value: bigint | number): PlistUid {
  const big = BigInt(value);
  if (big < 0n || big > UID_MAX) throw new SigningError('plist_invalid', `plist UID ${big} is outside 0 … 2^64-1`);
  return { type: 'uid', value: big };
}

export function plistArray(items: PlistValue[] = []): PlistArray {
  return { type: 'array', value: items };
}

export function plistDict(entries: Iterable<readonly [string, PlistValue]> | Record<string, PlistValue> = []): PlistDict {
  const map = new Map<string, PlistValue>();
  const iterable: Iterable<readonly [string, PlistValue]> =
    Symbol.iterator in entries ? (entries as Iterable<readonly [string, PlistValue]>) : Object.entries(entries);
  for (const [key, value] of iterable) map.set(key, value);
  return { type: 'dict', value: map };
}

/** Narrows `value` to `type`, or throws `code` naming `what` (e.g. "Entitlements"). */
export function expectType<T extends PlistType>(
  value: PlistValue | undefined,
  type: T,
  what: string,
  code: 'plist_invalid' | 'profile_invalid' | 'entitlements_invalid' = 'plist_invalid',
): PlistOfType<T> {
  if (value === undefined) throw new SigningError(code, `${what} is missing`);
  if (value.type !== type) throw new SigningError(code, `${what} is ${withArticle(value.type)}, expected ${withArticle(type)}`);
  return value as PlistOfType<T>;
}

function withArticle(type: PlistType): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * Deep semantic equality: dictionaries compare as unordered maps (as CFEqual does), reals and
 * dates by exact bit pattern (so NaN equals NaN and -0 differs from 0), data byte by byte.
 */
export function plistEqual(a: PlistValue, b: PlistValue): boolean {
  if (a.type !== b.type) return false;
  switch (a.type) {
    case 'real':
    case 'date':
      return Object.is(a.value, (b as typeof a).value);
    case 'data':
      return Buffer.from(a.value).equals((b as PlistData).value);
    case 'array': {
      const other = (b as PlistArray).value;
      return a.value.length === other.length && a.value.every((item, i) => plistEqual(item, other[i]!));
    }
    case 'dict': {
      const other = (b as PlistDict).value;
      if (a.value.size !== other.size) return false;
      for (const [key, item] of a.value) {
        const counterpart = other.get(key);
        if (counterpart === undefined || !plistEqual(item, counterpart)) return false;
      }
      return true;
    }
    default:
      return a.value === (b as typeof a).value;
  }
}

/** A deep copy, so an edited Info.plist never aliases the parsed original. */
export function plistClone<T extends PlistValue>(value: T): T {
  switch (value.type) {
    case 'array':
      return { type: 'array', value: value.value.map(plistClone) } as T;
    case 'dict':
      return { type: 'dict', value: new Map([...value.value].map(([k, v]) => [k, plistClone(v)])) } as T;
    case 'data':
      return { type: 'data', value: Uint8Array.from(value.value) } as T;
    default:
      return { ...value };
  }
}
