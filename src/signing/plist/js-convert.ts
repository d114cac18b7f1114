// Convenience conversions between the typed model and plain JS values. Only conversions that
// cannot lose information are made implicitly; anything ambiguous must be built with the typed
// constructors (e.g. a real whose value is integral: `plistReal(1)`).
import { SigningError } from '../errors.ts';
import {
  dateToJs,
  plistArray,
  plistBoolean,
  plistData,
  plistDate,
  plistDict,
  plistInteger,
  plistReal,
  plistString,
  type PlistValue,
} from './model.ts';

/** What `plistToJs` returns: integers as number when safe, else bigint; dates as Date; data as Buffer. */
export type PlainPlist =
  | string
  | number
  | bigint
  | boolean
  | Date
  | Buffer
  | { CF$UID: number | bigint }
  | PlainPlist[]
  | { [key: string]: PlainPlist };

/**
 * Model → plain JS. Lossy in one documented way: a real and an integer of the same value both
 * become `number` (keep the model when the distinction matters, as it does for entitlements);
 * dates become millisecond-precision Dates.
 */
export function plistToJs(value: PlistValue): PlainPlist {
  switch (value.type) {
    case 'string':
    case 'boolean':
    case 'real':
      return value.value;
    case 'integer':
      return safeNumber(value.value);
    case 'date':
      return dateToJs(value);
    case 'data':
      return Buffer.from(value.value);
    case 'uid':
      return { CF$UID: safeNumber(value.value) };
    case 'array':
      return value.value.map(plistToJs);
    case 'dict': {
      const out: { [key: string]: PlainPlist } = {};
      // defineProperty: a key named "__proto__" must become an own property, not the prototype.
      for (const [key, item] of value.value) {
        Object.defineProperty(out, key, { value: plistToJs(item), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
  }
}

function safeNumber(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/**
 * Plain JS → model. number: safe integer → integer, other finite → real (unsafe integral numbers
 * are refused: they may already have lost precision — pass a bigint); bigint → integer; Date →
 * date; Uint8Array/Buffer → data; arrays; Map or plain object → dict (key order kept).
 * null, undefined, functions and symbols are refused: plists have no such values.
 */
export function plistFromJs(value: unknown, path = '$'): PlistValue {
  switch (typeof value) {
    case 'string':
      return plistString(value);
    case 'boolean':
      return plistBoolean(value);
    case 'bigint':
      return plistInteger(value);
    case 'number':
      if (Number.isSafeInteger(value)) return plistInteger(value);
      if (Number.isInteger(value)) {
        throw new SigningError('plist_invalid', `${path}: ${value} is an integer beyond 2^53; pass a bigint or use plistReal()`);
      }
      return plistReal(value);
    case 'object': {
      if (value === null) break;
      if (value instanceof Date) return plistDate(value);
      if (value instanceof Uint8Array) return plistData(value);
      if (Array.isArray(value)) return plistArray(value.map((item, i) => plistFromJs(item, `${path}[${i}]`)));
      if (value instanceof Map) {
        const entries: [string, PlistValue][] = [];
        for (const [key, item] of value) {
          if (typeof key !== 'string') throw new SigningError('plist_invalid', `${path}: dictionary keys must be strings`);
          entries.push([key, plistFromJs(item, `${path}.${key}`)]);
        }
        return plistDict(entries);
      }
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) {
        return plistDict(Object.entries(value).map(([key, item]) => [key, plistFromJs(item, `${path}.${key}`)] as const));
      }
      break;
    }
  }
  throw new SigningError('plist_invalid', `${path}: ${value === null ? 'null' : typeof value} has no property-list representation`);
}
