// Strict reader of DER entitlements (code-signature slot 7), for the verifier to compare slot 7
// with slot 5. The layout is the one der-encode.ts documents (CoreEntitlements; rcodesign
// plist_der.rs). Being a verifier, it accepts only canonical DER (X.690 §10): minimal lengths
// and integers, booleans 00/FF, dictionary keys strictly ascending — so a blob that decodes here
// re-encodes to the same bytes.
import { SigningError } from '../errors.ts';
import type { PlistDict, PlistValue } from './model.ts';
import { DER_TAG } from './der-encode.ts';

const MAX_DEPTH = 512;

export function decodeEntitlementsDer(der: Uint8Array): PlistDict {
  const buf = Buffer.from(der.buffer, der.byteOffset, der.byteLength);
  const outer = readTlv(buf, 0, buf.length);
  if (outer.tag !== DER_TAG.plist) fail(`expected [APPLICATION 16] (0x70), found 0x${outer.tag.toString(16)}`);
  if (outer.end !== buf.length) fail('bytes after the entitlements');
  const version = readTlv(buf, outer.start, outer.end);
  if (version.tag !== DER_TAG.integer) fail('missing version INTEGER');
  if (readInteger(buf, version) !== 1n) fail('version is not 1');
  const dict = readTlv(buf, version.end, outer.end);
  if (dict.tag !== DER_TAG.dictionary) fail('the entitlements are not a dictionary');
  if (dict.end !== outer.end) fail('extra elements after the dictionary');
  return readDict(buf, dict, 1);
}

interface Tlv {
  tag: number;
  start: number; // first content byte
  end: number; // one past the last content byte
}

function fail(message: string): never {
  throw new SigningError('entitlements_invalid', `DER entitlements: ${message}`);
}

function readTlv(buf: Buffer, at: number, limit: number): Tlv {
  if (at + 2 > limit) fail(`truncated element at ${at}`);
  const tag = buf[at]!;
  const first = buf[at + 1]!;
  let length: number;
  let start: number;
  if (first < 0x80) {
    length = first;
    start = at + 2;
  } else {
    const count = first & 0x7f;
    if (count === 0) fail(`indefinite length at ${at}`);
    if (count > 4) fail(`length of ${count} bytes at ${at}`);
    if (at + 2 + count > limit) fail(`truncated length at ${at}`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buf[at + 2 + i]!;
    // X.690 §10.1: the definite form uses the fewest length bytes.
    if (length < 0x80 || buf[at + 2] === 0) fail(`non-minimal length at ${at}`);
    start = at + 2 + count;
  }
  if (start + length > limit) fail(`element at ${at} runs past its container`);
  return { tag, start, end: start + length };
}

function readValue(buf: Buffer, tlv: Tlv, depth: number): PlistValue {
  if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`);
  switch (tlv.tag) {
    case DER_TAG.boolean: {
      if (tlv.end - tlv.start !== 1) fail('BOOLEAN is not one byte');
      const byte = buf[tlv.start]!;
      if (byte !== 0x00 && byte !== 0xff) fail('BOOLEAN is neither 00 nor FF');
      return { type: 'boolean', value: byte === 0xff };
    }
    case DER_TAG.integer:
      return { type: 'integer', value: readInteger(buf, tlv) };
    case DER_TAG.utf8String:
      return { type: 'string', value: readUtf8(buf, tlv) };
    case DER_TAG.sequence: {
      const items: PlistValue[] = [];
      for (let at = tlv.start; at < tlv.end; ) {
        const child = readTlv(buf, at, tlv.end);
        items.push(readValue(buf, child, depth + 1));
        at = child.end;
      }
      return { type: 'array', value: items };
    }
    case DER_TAG.dictionary:
      return readDict(buf, tlv, depth);
    default:
      return fail(`unexpected tag 0x${tlv.tag.toString(16)}`);
  }
}

function readDict(buf: Buffer, tlv: Tlv, depth: number): PlistDict {
  const map = new Map<string, PlistValue>();
  let previous: Buffer | undefined;
  for (let at = tlv.start; at < tlv.end; ) {
    const entry = readTlv(buf, at, tlv.end);
    if (entry.tag !== DER_TAG.sequence) fail('dictionary entry is not a SEQUENCE');
    const key = readTlv(buf, entry.start, entry.end);
    if (key.tag !== DER_TAG.utf8String) fail('dictionary key is not a UTF8String');
    const keyBytes = buf.subarray(key.start, key.end);
    if (previous && Buffer.compare(previous, keyBytes) >= 0) fail('dictionary keys are not in strictly ascending order');
    previous = keyBytes;
    const value = readTlv(buf, key.end, entry.end);
    if (value.end !== entry.end) fail('dictionary entry holds more than a key and a value');
    map.set(readUtf8(buf, key), readValue(buf, value, depth + 1));
    at = entry.end;
  }
  return { type: 'dict', value: map };
}

function readInteger(buf: Buffer, tlv: Tlv): bigint {
  const length = tlv.end - tlv.start;
  if (length === 0) fail('empty INTEGER');
  if (length > 8) fail('INTEGER wider than 64 bits');
  // X.690 §8.3.2: the first nine bits must not be all zeros or all ones.
  if (length > 1) {
    const a = buf[tlv.start]!;
    const b = buf[tlv.start + 1]! & 0x80;
    if ((a === 0x00 && b === 0) || (a === 0xff && b !== 0)) fail('non-minimal INTEGER');
  }
  let value = 0n;
  for (let i = tlv.start; i < tlv.end; i++) value = (value << 8n) | BigInt(buf[i]!);
  if (buf[tlv.start]! & 0x80) value -= 1n << BigInt(length * 8);
  return value;
}

function readUtf8(buf: Buffer, tlv: Tlv): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf.subarray(tlv.start, tlv.end));
  } catch (cause) {
    throw new SigningError('entitlements_invalid', 'DER entitlements: UTF8String is not valid UTF-8', { cause });
  }
}
