// Little-endian, length-prefixed byte structures of the APK Signature Scheme v2/v3 blocks
// (apksig ApkSigningBlockUtils: "length-prefixed" = u32 little-endian length then the bytes).
// Hand-written: the format is specific to apksig and no npm library encodes it.
import { SigningError, type SigningErrorCode } from '../errors.ts';

/** lp(x): u32 length then x. */
export function lengthPrefixed(data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(4 + data.length);
  out.writeUInt32LE(data.length, 0);
  out.set(data, 4);
  return out;
}

/** Concatenation of lp(item) for each item (apksig encodeAsSequenceOfLengthPrefixedElements). */
export function sequenceOfLengthPrefixed(items: readonly Uint8Array[]): Buffer {
  return Buffer.concat(items.map(lengthPrefixed));
}

/** Concatenation of lp(u32 id || lp(bytes)) (apksig encodeAsSequenceOfLengthPrefixedPairsOfIntAndLengthPrefixedBytes). */
export function sequenceOfIdAndBytes(pairs: readonly { id: number; data: Uint8Array }[]): Buffer {
  return sequenceOfLengthPrefixed(pairs.map(({ id, data }) => Buffer.concat([u32(id), lengthPrefixed(data)])));
}

export function u32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32LE(value >>> 0, 0);
  return out;
}

export function u64(value: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeBigUInt64LE(BigInt(value), 0);
  return out;
}

/**
 * A bounds-checked cursor over one structure. Every overrun becomes a SigningError with the
 * given code and a message naming the structure, never a RangeError.
 */
export class ByteReader {
  readonly buffer: Buffer;
  private position = 0;
  private readonly what: string;
  private readonly code: SigningErrorCode;

  constructor(buffer: Buffer, what: string, code: SigningErrorCode = 'apk_signature_invalid') {
    this.buffer = buffer;
    this.what = what;
    this.code = code;
  }

  get remaining(): number {
    return this.buffer.length - this.position;
  }

  get offset(): number {
    return this.position;
  }

  fail(message: string): never {
    throw new SigningError(this.code, `${this.what}: ${message}`);
  }

  u32(): number {
    if (this.remaining < 4) this.fail(`needs 4 more bytes at offset ${this.position}, ${this.remaining} left`);
    const value = this.buffer.readUInt32LE(this.position);
    this.position += 4;
    return value;
  }

  bytes(length: number): Buffer {
    if (length > this.remaining) this.fail(`length ${length} at offset ${this.position} exceeds the ${this.remaining} bytes left`);
    const value = this.buffer.subarray(this.position, this.position + length);
    this.position += length;
    return value;
  }

  /** lp(x) -> x */
  lengthPrefixed(): Buffer {
    return this.bytes(this.u32());
  }

  /** lp(x) -> a reader over x, for nested structures. */
  nested(what: string): ByteReader {
    return new ByteReader(this.lengthPrefixed(), `${this.what} > ${what}`, this.code);
  }

  /** Reads the rest as a sequence of lp(item). */
  sequence(): Buffer[] {
    const items: Buffer[] = [];
    while (this.remaining > 0) items.push(this.lengthPrefixed());
    return items;
  }

  /** Reads the rest as a sequence of lp(u32 id || lp(bytes)). */
  idAndBytesSequence(): { id: number; data: Buffer }[] {
    return this.sequence().map((item, index) => {
      const entry = new ByteReader(item, `${this.what} #${index + 1}`, this.code);
      // apksig: a pair shorter than 8 bytes is malformed.
      const id = entry.u32();
      const data = entry.lengthPrefixed();
      return { id, data };
    });
  }
}
