// Binary plist ("bplist00") writer, used to write an edited Info.plist back in its original
// format. Layout and object order follow Python plistlib's `_BinaryPlistWriter` (itself modelled
// on CFBinaryPList.c), so for the same key order the output is byte-identical to
// `plistlib.dumps(value, fmt=FMT_BINARY, sort_keys=False)`, which the tests use as an oracle:
//   - objects are flattened depth-first: a container, then (dict) all keys, then all values;
//   - equal scalars (same type and value; reals/dates by bit pattern, data by bytes) are written
//     once and shared; containers and UIDs never are;
//   - ints: negative → 8-byte signed; else the smallest of 1/2/4/8 bytes, 16 bytes for ≥ 2^63;
//   - reals and dates as float64; strings as ASCII (0x5) when every char < 0x80, else UTF-16BE;
//   - object refs and offsets use the fewest bytes (1, 2, 4 or 8) that can hold them.
// CoreFoundation's own writer emits dictionary keys in hash order, so Apple's bytes cannot be
// reproduced exactly; only the semantic round trip matters for Info.plist.
import { SigningError } from '../errors.ts';
import type { PlistValue } from './model.ts';
import { BINARY_MAGIC } from './binary-parse.ts';

export interface BinaryWriteOptions {
  /** Sort dictionary keys (UTF-16 code-unit order) instead of keeping the model's order. */
  sortKeys?: boolean;
}

const MAX_DEPTH = 512;

export function writeBinaryPlist(value: PlistValue, options: BinaryWriteOptions = {}): Buffer {
  const objects: PlistValue[] = [];
  const refs = new Map<PlistValue, number>();
  const scalarRefs = new Map<string, number>();
  const sortKeys = options.sortKeys ?? false;
  const entriesOf = (dict: Extract<PlistValue, { type: 'dict' }>) => {
    const entries = [...dict.value];
    if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return entries;
  };

  const keyStrings = new Map<string, PlistValue>();
  const open = new Set<PlistValue>();
  const flatten = (item: PlistValue, depth: number): void => {
    if (depth > MAX_DEPTH) throw new SigningError('plist_invalid', `plist nests deeper than ${MAX_DEPTH} levels`);
    const scalar = scalarKey(item);
    if (scalar !== undefined) {
      if (scalarRefs.has(scalar)) {
        refs.set(item, scalarRefs.get(scalar)!);
        return;
      }
      scalarRefs.set(scalar, objects.length);
    } else if (refs.has(item)) {
      // plistlib shares a container object met twice (by identity); a container inside itself
      // cannot be written.
      if (open.has(item)) throw new SigningError('plist_invalid', 'plist contains itself (a cycle)');
      return;
    }
    refs.set(item, objects.length);
    objects.push(item);
    open.add(item);
    if (item.type === 'dict') {
      const entries = entriesOf(item);
      for (const [key] of entries) {
        // Keys are plain strings in the model; give each a string object of its own to reference.
        let keyValue = keyStrings.get(key);
        if (!keyValue) {
          keyValue = { type: 'string', value: key };
          keyStrings.set(key, keyValue);
        }
        flatten(keyValue, depth + 1);
      }
      for (const [, child] of entries) flatten(child, depth + 1);
    } else if (item.type === 'array') {
      for (const child of item.value) flatten(child, depth + 1);
    }
    open.delete(item);
  };
  flatten(value, 0);

  const refSize = sizeFor(objects.length);
  const refOf = (item: PlistValue): number => refs.get(item)!;
  const chunks: Buffer[] = [Buffer.from(BINARY_MAGIC, 'latin1')];
  let position = 8;
  const offsets: number[] = [];
  const push = (chunk: Buffer) => {
    chunks.push(chunk);
    position += chunk.length;
  };
  for (const item of objects) {
    offsets.push(position);
    push(encodeObject(item, refSize, refOf, keyStrings, entriesOf));
  }
  const offsetTableOffset = position;
  const offsetSize = sizeFor(offsetTableOffset);
  push(packUints(offsets, offsetSize));
  const trailer = Buffer.alloc(32);
  trailer[6] = offsetSize;
  trailer[7] = refSize;
  trailer.writeBigUInt64BE(BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(BigInt(refOf(value)), 16);
  trailer.writeBigUInt64BE(BigInt(offsetTableOffset), 24);
  push(trailer);
  return Buffer.concat(chunks);
}

/** Identity of a shareable scalar, or undefined for containers and UIDs (never shared). */
function scalarKey(item: PlistValue): string | undefined {
  switch (item.type) {
    case 'string':
      return `s${item.value}`;
    case 'integer':
      return `i${item.value}`;
    case 'boolean':
      return `b${item.value}`;
    case 'real':
      return `r${doubleBits(item.value)}`;
    case 'date':
      return `d${doubleBits(item.value)}`;
    case 'data':
      return `x${Buffer.from(item.value).toString('hex')}`;
    default:
      return undefined;
  }
}

function doubleBits(value: number): string {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(value);
  return b.toString('hex');
}

/** plistlib `_count_to_size`. */
function sizeFor(count: number): number {
  if (count < 1 << 8) return 1;
  if (count < 1 << 16) return 2;
  if (count < 2 ** 32) return 4;
  return 8;
}

function encodeObject(
  item: PlistValue,
  refSize: number,
  refOf: (item: PlistValue) => number,
  keyStrings: Map<string, PlistValue>,
  entriesOf: (dict: Extract<PlistValue, { type: 'dict' }>) => [string, PlistValue][],
): Buffer {
  switch (item.type) {
    case 'boolean':
      return Buffer.of(item.value ? 0x09 : 0x08);
    case 'integer':
      return encodeInteger(item.value);
    case 'real': {
      const b = Buffer.alloc(9);
      b[0] = 0x23;
      b.writeDoubleBE(item.value, 1);
      return b;
    }
    case 'date': {
      const b = Buffer.alloc(9);
      b[0] = 0x33;
      b.writeDoubleBE(item.value, 1);
      return b;
    }
    case 'data':
      return Buffer.concat([sizeHeader(0x40, item.value.length), Buffer.from(item.value)]);
    case 'string': {
      if (/^[\x00-\x7f]*$/.test(item.value)) return Buffer.concat([sizeHeader(0x50, item.value.length), Buffer.from(item.value, 'latin1')]);
      const utf16 = Buffer.from(item.value, 'utf16le').swap16();
      return Buffer.concat([sizeHeader(0x60, utf16.length / 2), utf16]);
    }
    case 'uid': {
      // plistlib: 1, 2, 4 or 8 bytes, marker 0x80 | (size - 1).
      const size = item.value < 1n << 8n ? 1 : item.value < 1n << 16n ? 2 : item.value < 1n << 32n ? 4 : 8;
      const b = Buffer.alloc(1 + size);
      b[0] = 0x80 | (size - 1);
      writeBig(b, 1, size, item.value);
      return b;
    }
    case 'array':
      return Buffer.concat([sizeHeader(0xa0, item.value.length), packUints(item.value.map(refOf), refSize)]);
    case 'dict': {
      const entries = entriesOf(item);
      const all = [...entries.map(([key]) => refOf(keyStrings.get(key)!)), ...entries.map(([, child]) => refOf(child))];
      return Buffer.concat([sizeHeader(0xd0, entries.length), packUints(all, refSize)]);
    }
  }
}

/** Big-endian unsigned integers of `size` bytes each (refs and offsets). */
function packUints(values: number[], size: number): Buffer {
  const b = Buffer.alloc(values.length * size);
  if (size <= 6) values.forEach((value, i) => b.writeUIntBE(value, i * size, size));
  else values.forEach((value, i) => writeBig(b, i * size, size, BigInt(value)));
  return b;
}

/** plistlib `_write_object` for int. */
function encodeInteger(value: bigint): Buffer {
  if (value < 0n) {
    const b = Buffer.alloc(9);
    b[0] = 0x13;
    b.writeBigInt64BE(value, 1);
    return b;
  }
  const size = value < 1n << 8n ? 1 : value < 1n << 16n ? 2 : value < 1n << 32n ? 4 : value < 1n << 63n ? 8 : 16;
  const b = Buffer.alloc(1 + size);
  b[0] = 0x10 | Math.log2(size);
  writeBig(b, 1, size, value);
  return b;
}

function writeBig(b: Buffer, at: number, size: number, value: bigint): void {
  let rest = value;
  for (let i = size - 1; i >= 0; i--) {
    b[at + i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}

/** plistlib `_write_size`: counts below 15 in the marker, else 0xF and an int object. */
function sizeHeader(token: number, size: number): Buffer {
  if (size < 15) return Buffer.of(token | size);
  const int = encodeInteger(BigInt(size));
  return Buffer.concat([Buffer.of(token | 0x0f), int]);
}
