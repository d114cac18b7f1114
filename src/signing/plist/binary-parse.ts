// Binary plist ("bplist00") reader. Hand-written: bplist-parser is exact but trusts its input
// (no bounds, cycle or expansion checks), and Info.plist files come from uploaded, untrusted IPAs.
//
// Format (CFBinaryPList.c; Python plistlib `_BinaryPlistParser` documents the same layout):
//   "bplist00" | objects… | offset table | 32-byte trailer
//   trailer: 6 unused/sort bytes, offsetIntSize (1), objectRefSize (1), numObjects (8),
//            topObject (8), offsetTableOffset (8) — all big-endian.
//   object marker byte: high nibble = type, low nibble = size or 0xF (size follows as an int object)
//     0x08/0x09 false/true · 0x1n int of 2^n bytes (1, 2, 4 unsigned; 8, 16 signed) ·
//     0x22/0x23 real (float32/float64) · 0x33 date (float64 CFAbsoluteTime) · 0x4n data ·
//     0x5n ASCII string · 0x6n UTF-16BE string (n code units) · 0x8n UID of n+1 bytes ·
//     0xAn array (n object refs) · 0xDn dict (n key refs, then n value refs).
// Refused: null (0x00), fill, sets, any other marker; refs/offsets out of range; container
// cycles; non-string keys; repeated keys; graphs whose expansion exceeds `maxNodes` (a shared
// sub-array referenced twice at each of 40 levels would otherwise expand to 2^40 nodes).
import { SigningError } from '../errors.ts';
import { checkIntegerRange, type PlistValue } from './model.ts';

export const BINARY_MAGIC = 'bplist00';
const MAX_DEPTH = 512;

export interface BinaryParseOptions {
  /** Upper bound on values built (after expanding shared references). Default 1,000,000. */
  maxNodes?: number;
}

export function isBinaryPlist(input: Uint8Array): boolean {
  return input.length >= 8 && Buffer.from(input.buffer, input.byteOffset, 8).toString('latin1') === BINARY_MAGIC;
}

export function parseBinaryPlist(input: Uint8Array, options: BinaryParseOptions = {}): PlistValue {
  return new BinaryPlistReader(Buffer.from(input.buffer, input.byteOffset, input.byteLength), options.maxNodes ?? 1_000_000).top();
}

function fail(message: string): never {
  throw new SigningError('plist_invalid', `binary plist: ${message}`);
}

class BinaryPlistReader {
  private readonly buf: Buffer;
  private readonly offsetSize: number;
  private readonly refSize: number;
  private readonly numObjects: number;
  private readonly topObject: number;
  private readonly offsetTable: number;
  private readonly inProgress = new Set<number>();
  private nodesLeft: number;

  constructor(buf: Buffer, maxNodes: number) {
    this.buf = buf;
    this.nodesLeft = maxNodes;
    if (!isBinaryPlist(buf)) fail('missing "bplist00" header');
    if (buf.length < 8 + 1 + 32) fail('too short');
    const t = buf.length - 32;
    this.offsetSize = buf[t + 6]!;
    this.refSize = buf[t + 7]!;
    const numObjects = buf.readBigUInt64BE(t + 8);
    const topObject = buf.readBigUInt64BE(t + 16);
    const offsetTable = buf.readBigUInt64BE(t + 24);
    if (this.offsetSize < 1 || this.offsetSize > 8) fail(`offset size ${this.offsetSize} is not 1–8`);
    if (this.refSize < 1 || this.refSize > 8) fail(`object reference size ${this.refSize} is not 1–8`);
    if (numObjects < 1n || topObject >= numObjects) fail('top object is not among the objects');
    // The offset table sits between the objects and the trailer.
    if (offsetTable < 9n || offsetTable + numObjects * BigInt(this.offsetSize) > BigInt(t)) {
      fail('offset table lies outside the file');
    }
    this.numObjects = Number(numObjects);
    this.topObject = Number(topObject);
    this.offsetTable = Number(offsetTable);
  }

  top(): PlistValue {
    return this.object(this.topObject, 0);
  }

  private offsetOf(ref: number): number {
    if (ref >= this.numObjects) fail(`object reference ${ref} is beyond the ${this.numObjects} objects`);
    const offset = this.uint(this.offsetTable + ref * this.offsetSize, this.offsetSize, this.buf.length - 32);
    if (offset < 8 || offset >= this.offsetTable) fail(`object ${ref} has offset ${offset} outside the object area`);
    return offset;
  }

  private object(ref: number, depth: number): PlistValue {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`);
    if (--this.nodesLeft < 0) fail('object graph expands beyond the node limit');
    const offset = this.offsetOf(ref);
    const marker = this.buf[offset]!;
    const high = marker >> 4;
    const low = marker & 0x0f;
    switch (high) {
      case 0x0:
        if (marker === 0x08 || marker === 0x09) return { type: 'boolean', value: marker === 0x09 };
        return fail(`object ${ref}: marker 0x${hex(marker)} (null/fill) is not a property-list value`);
      case 0x1: {
        const value = this.integer(offset + 1, low);
        try {
          checkIntegerRange(value);
        } catch (error) {
          fail((error as Error).message);
        }
        return { type: 'integer', value };
      }
      case 0x2:
        if (low === 2) return { type: 'real', value: this.bytes(offset + 1, 4).readFloatBE(0) };
        if (low === 3) return { type: 'real', value: this.bytes(offset + 1, 8).readDoubleBE(0) };
        return fail(`object ${ref}: real of 2^${low} bytes`);
      case 0x3:
        if (marker !== 0x33) fail(`object ${ref}: date marker 0x${hex(marker)}`);
        return { type: 'date', value: this.bytes(offset + 1, 8).readDoubleBE(0) };
      case 0x4: {
        const { count, start } = this.count(offset, low);
        return { type: 'data', value: Buffer.from(this.bytes(start, count)) }; // a copy: never aliases the input
      }
      case 0x5: {
        const { count, start } = this.count(offset, low);
        const bytes = this.bytes(start, count);
        if (bytes.some((b) => b > 0x7f)) fail(`object ${ref}: ASCII string holds a byte above 0x7F`);
        return { type: 'string', value: bytes.toString('latin1') };
      }
      case 0x6: {
        const { count, start } = this.count(offset, low);
        const bytes = Buffer.from(this.bytes(start, count * 2));
        return { type: 'string', value: bytes.swap16().toString('utf16le') };
      }
      case 0x8:
        return { type: 'uid', value: this.unsigned(offset + 1, low + 1) };
      case 0xa:
        return this.container(ref, offset, low, depth, false);
      case 0xd:
        return this.container(ref, offset, low, depth, true);
      default:
        return fail(`object ${ref}: unsupported marker 0x${hex(marker)}`);
    }
  }

  private container(ref: number, offset: number, low: number, depth: number, isDict: boolean): PlistValue {
    if (this.inProgress.has(ref)) fail(`object ${ref} contains itself`);
    const { count, start } = this.count(offset, low);
    this.bytes(start, count * this.refSize * (isDict ? 2 : 1)); // bounds check of the whole ref list
    this.inProgress.add(ref);
    const refAt = (i: number) => this.uint(start + i * this.refSize, this.refSize);
    let result: PlistValue;
    if (isDict) {
      const map = new Map<string, PlistValue>();
      for (let i = 0; i < count; i++) {
        const key = this.object(refAt(i), depth + 1);
        if (key.type !== 'string') fail(`dictionary ${ref} has a ${key.type} key`);
        if (map.has(key.value)) fail(`dictionary ${ref} repeats the key "${key.value}"`);
        map.set(key.value, this.object(refAt(count + i), depth + 1));
      }
      result = { type: 'dict', value: map };
    } else {
      const items: PlistValue[] = [];
      for (let i = 0; i < count; i++) items.push(this.object(refAt(i), depth + 1));
      result = { type: 'array', value: items };
    }
    this.inProgress.delete(ref);
    return result;
  }

  /** Element count from the low nibble, or from the int object that follows when it is 0xF. */
  private count(offset: number, low: number): { count: number; start: number } {
    if (low !== 0x0f) return { count: low, start: offset + 1 };
    const marker = this.bytes(offset + 1, 1)[0]!;
    if (marker >> 4 !== 0x1) fail(`length at ${offset + 1} is not an integer`);
    const size = 1 << (marker & 0x0f);
    if (size > 8) fail(`length at ${offset + 1} is wider than 8 bytes`);
    const value = this.integer(offset + 2, marker & 0x0f);
    if (value < 0n || value > BigInt(this.buf.length)) fail(`length ${value} at ${offset + 1} exceeds the file`);
    return { count: Number(value), start: offset + 2 + size };
  }

  /** Int object payload: 1, 2, 4 bytes unsigned; 8 and 16 bytes two's complement. */
  private integer(start: number, log2: number): bigint {
    if (log2 > 4) fail(`integer of 2^${log2} bytes`);
    const size = 1 << log2;
    const bytes = this.bytes(start, size);
    let value = 0n;
    for (const b of bytes) value = (value << 8n) | BigInt(b);
    if (size >= 8 && bytes[0]! & 0x80) value -= 1n << BigInt(size * 8);
    return value;
  }

  private unsigned(start: number, size: number, limit = this.offsetTable): bigint {
    if (size > 8) fail(`UID of ${size} bytes`);
    let value = 0n;
    for (const b of this.bytes(start, size, limit)) value = (value << 8n) | BigInt(b);
    return value;
  }

  /** Refs and offsets: plain numbers (no BigInt) for the usual 1–6 byte widths. */
  private uint(start: number, size: number, limit = this.offsetTable): number {
    if (size <= 6) return this.bytes(start, size, limit).readUIntBE(0, size);
    const value = this.unsigned(start, size, limit);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) fail(`offset or reference ${value} is too large`);
    return Number(value);
  }

  /** Bytes inside the object area (before the offset table) unless another limit is given. */
  private bytes(start: number, length: number, limit = this.offsetTable): Buffer {
    if (!Number.isSafeInteger(length) || start + length > limit) fail(`object data at ${start} runs past the object area`);
    return this.buf.subarray(start, start + length);
  }
}

function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}
