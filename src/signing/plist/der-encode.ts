// DER encoding of an entitlements dictionary for code-signature slot 7 (CSSLOT_DER_ENTITLEMENTS,
// blob magic 0xfade7172), in Apple's CoreEntitlements form (ios-signing.md §8.2; rcodesign
// apple-codesign/src/plist_der.rs, whose goldens come from Apple's `codesign`):
//
//   [APPLICATION 16] { INTEGER 1 (version), dict }               70 LL 02 01 01 <dict>
//   dict   = [CONTEXT 16] constructed { SEQUENCE { UTF8String key, value } … }   B0 LL (30 LL 0C LL key value)…
//            entries sorted by key bytes (UTF-8 byte order, as rcodesign's BTreeMap<String>)
//   value  = BOOLEAN (01 01 FF|00) · INTEGER (02, minimal two's complement, signed 64-bit) ·
//            UTF8String (0C) · array = SEQUENCE (30) of values · dict (B0)
//   lengths: definite, short form below 128, else 81 LL / 82 LL LL … (X.690 §8.1.3)
//
// Reals, dates, data and UIDs have no DER form: they are refused rather than guessed, like
// rcodesign does (ios-signing.md §21). zsign writes INTEGER wrongly (value as length, §14 row 1).
import { SigningError } from '../errors.ts';
import type { PlistDict, PlistValue } from './model.ts';

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const MAX_DEPTH = 512;

export const DER_TAG = {
  boolean: 0x01,
  integer: 0x02,
  utf8String: 0x0c,
  sequence: 0x30,
  dictionary: 0xb0, // [CONTEXT 16] constructed
  plist: 0x70, // [APPLICATION 16] constructed
} as const;

/** Encodes the top-level entitlements dictionary; anything but a dict is refused (`codesign` refuses it too). */
export function encodeEntitlementsDer(entitlements: PlistValue): Buffer {
  if (entitlements.type !== 'dict') {
    throw new SigningError('entitlements_invalid', `entitlements must be a dictionary, not a ${entitlements.type}`);
  }
  return tlv(DER_TAG.plist, Buffer.concat([encodeDerInteger(1n), encodeDict(entitlements, '', 0)]));
}

function encodeValue(value: PlistValue, path: string, depth: number): Buffer {
  if (depth > MAX_DEPTH) throw new SigningError('entitlements_invalid', `entitlements nest deeper than ${MAX_DEPTH} levels`);
  switch (value.type) {
    case 'boolean':
      return Buffer.of(DER_TAG.boolean, 0x01, value.value ? 0xff : 0x00);
    case 'integer':
      if (value.value < INT64_MIN || value.value > INT64_MAX) {
        throw new SigningError('entitlements_invalid', `entitlement ${path} = ${value.value} does not fit the signed 64-bit DER integer`);
      }
      return encodeDerInteger(value.value);
    case 'string':
      return tlv(DER_TAG.utf8String, utf8(value.value, path));
    case 'array':
      return tlv(DER_TAG.sequence, Buffer.concat(value.value.map((item, i) => encodeValue(item, `${path}[${i}]`, depth + 1))));
    case 'dict':
      return encodeDict(value, path, depth);
    default:
      throw new SigningError('entitlements_invalid', `entitlement ${path || '(root)'} is a ${value.type}, which has no DER form`);
  }
}

function encodeDict(dict: PlistDict, path: string, depth: number): Buffer {
  const entries = [...dict.value].map(([key, item]) => {
    const keyBytes = utf8(key, path);
    const childPath = path ? `${path}.${key}` : key;
    return { keyBytes, der: tlv(DER_TAG.sequence, Buffer.concat([tlv(DER_TAG.utf8String, keyBytes), encodeValue(item, childPath, depth + 1)])) };
  });
  entries.sort((a, b) => Buffer.compare(a.keyBytes, b.keyBytes));
  return tlv(DER_TAG.dictionary, Buffer.concat(entries.map((e) => e.der)));
}

function utf8(text: string, path: string): Buffer {
  if (!text.isWellFormed()) throw new SigningError('entitlements_invalid', `entitlement ${path || '(root)'} holds a lone UTF-16 surrogate`);
  return Buffer.from(text, 'utf8');
}

/** X.690 §8.3: minimal two's complement (no leading 0x00 before a clear sign bit, no 0xFF before a set one). */
export function encodeDerInteger(value: bigint): Buffer {
  const bytes: number[] = [];
  let rest = value;
  for (;;) {
    const byte = Number(rest & 0xffn);
    bytes.unshift(byte);
    rest >>= 8n; // arithmetic shift: stays -1 for negatives
    if ((rest === 0n && (byte & 0x80) === 0) || (rest === -1n && (byte & 0x80) !== 0)) break;
  }
  return tlv(DER_TAG.integer, Buffer.from(bytes));
}

/** X.690 §8.1.3 definite length: short form below 128, else 0x80 | n followed by n length bytes. */
function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let header: Buffer;
  if (length < 0x80) header = Buffer.of(tag, length);
  else {
    const lengthBytes: number[] = [];
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) lengthBytes.unshift(rest & 0xff);
    header = Buffer.of(tag, 0x80 | lengthBytes.length, ...lengthBytes);
  }
  return Buffer.concat([header, content]);
}
