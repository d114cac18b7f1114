// A minimal BER (X.690) element reader for the outer structure of CMS SignedData: tags, definite
// and indefinite lengths, children, and the few universal values the reader needs (OBJECT
// IDENTIFIER, small INTEGER, OCTET STRING in primitive or constructed form). Hand-written because
// asn1js (used elsewhere) decodes every nested element and even tries to decode OCTET and BIT
// STRING contents as ASN.1: on a code signature's CMS (three certificates, ~4 KB) that took
// ~1.7 ms and ~2 MB of short-lived objects per signature — verifying an app's 20-odd signatures
// showed up in whole-process profiles of `signet sign` (bench/ipa.ts). Certificates stay opaque
// DER here; X509Certificate and certificate.ts read them.
import { SigningError, type SigningErrorCode } from '../errors.ts';
import { MAX_DER_DEPTH } from './der.ts';

export interface BerElement {
  /** Class bits (0 universal, 1 application, 2 context, 3 private) as asn1js numbers them: 1-4. */
  readonly tagClass: number;
  readonly tagNumber: number;
  readonly constructed: boolean;
  /** Offset of the identifier octet. */
  readonly start: number;
  /** Offset of the first content octet. */
  readonly contentStart: number;
  /** Offset after the last content octet (before the end-of-contents octets when indefinite). */
  readonly contentEnd: number;
  /** Offset after the whole element (end-of-contents included). */
  readonly end: number;
}

export const UNIVERSAL = 1;
export const CONTEXT = 3;
export const TAG = { integer: 2, octetString: 4, oid: 6, sequence: 16, set: 17 } as const;

export class BerReader {
  readonly bytes: Buffer;
  readonly #code: SigningErrorCode;
  readonly #what: string;

  constructor(bytes: Buffer, code: SigningErrorCode, what: string) {
    this.bytes = bytes;
    this.#code = code;
    this.#what = what;
  }

  fail(message: string): SigningError {
    return new SigningError(this.#code, `${this.#what}: ${message}`);
  }

  /** The one element spanning all of the bytes. */
  root(): BerElement {
    const element = this.element(0, this.bytes.length, 0);
    if (element.end !== this.bytes.length) throw this.fail(`not valid ASN.1 (${this.bytes.length - element.end} trailing bytes after the structure).`);
    return element;
  }

  /** The element at `offset`, which must end by `limit`. */
  element(offset: number, limit: number, depth: number): BerElement {
    const b = this.bytes;
    if (depth > MAX_DER_DEPTH) throw this.fail(`ASN.1 nesting deeper than ${MAX_DER_DEPTH} levels.`);
    if (offset >= limit) throw this.fail('not valid ASN.1 (truncated element).');
    const first = b[offset]!;
    let at = offset + 1;
    let tagNumber = first & 0x1f;
    if (tagNumber === 0x1f) {
      // X.690 §8.1.2.4: high tag number form, base 128.
      tagNumber = 0;
      for (;;) {
        if (at >= limit) throw this.fail('not valid ASN.1 (truncated tag).');
        const byte = b[at++]!;
        tagNumber = tagNumber * 128 + (byte & 0x7f);
        if (tagNumber > 0xffffff) throw this.fail('not valid ASN.1 (tag number too large).');
        if ((byte & 0x80) === 0) break;
      }
    }
    const constructed = (first & 0x20) !== 0;
    if (at >= limit) throw this.fail('not valid ASN.1 (truncated length).');
    const lengthByte = b[at++]!;
    if (lengthByte === 0x80) {
      // §8.1.3.6: indefinite form, constructed only; the contents end with two zero octets.
      if (!constructed) throw this.fail('not valid ASN.1 (indefinite length on a primitive element).');
      let child = at;
      for (;;) {
        if (child + 2 <= limit && b[child] === 0 && b[child + 1] === 0) {
          return { tagClass: (first >> 6) + 1, tagNumber, constructed, start: offset, contentStart: at, contentEnd: child, end: child + 2 };
        }
        child = this.element(child, limit, depth + 1).end;
      }
    }
    let length = lengthByte;
    if (lengthByte > 0x80) {
      const count = lengthByte & 0x7f;
      if (count > 4 || lengthByte === 0xff) throw this.fail('not valid ASN.1 (unsupported length).');
      if (at + count > limit) throw this.fail('not valid ASN.1 (truncated length).');
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + b[at++]!;
    }
    const end = at + length;
    if (end > limit) throw this.fail('not valid ASN.1 (element runs past its container).');
    const element = { tagClass: (first >> 6) + 1, tagNumber, constructed, start: offset, contentStart: at, contentEnd: end, end };
    // Constructed contents must be whole elements (checked now, so children() cannot fail later).
    if (constructed) for (let child = at; child < end; ) child = this.element(child, end, depth + 1).end;
    return element;
  }

  children(element: BerElement): BerElement[] {
    const out: BerElement[] = [];
    for (let at = element.contentStart; at < element.contentEnd; ) {
      const child = this.element(at, element.contentEnd, 0);
      out.push(child);
      at = child.end;
    }
    return out;
  }

  /** The element's encoding, header and contents (end-of-contents included). */
  raw(element: BerElement): Buffer {
    return Buffer.from(this.bytes.subarray(element.start, element.end));
  }

  content(element: BerElement): Buffer {
    return Buffer.from(this.bytes.subarray(element.contentStart, element.contentEnd));
  }

  /** X.690 §8.19: the dotted form of an OBJECT IDENTIFIER's contents. */
  oid(element: BerElement): string {
    const b = this.bytes;
    if (element.constructed || element.contentEnd === element.contentStart) throw this.fail('not valid ASN.1 (bad OBJECT IDENTIFIER).');
    const arcs: number[] = [];
    let value = 0;
    for (let at = element.contentStart; at < element.contentEnd; at++) {
      const byte = b[at]!;
      value = value * 128 + (byte & 0x7f);
      if (value > Number.MAX_SAFE_INTEGER / 128) throw this.fail('not valid ASN.1 (OBJECT IDENTIFIER arc too large).');
      if ((byte & 0x80) !== 0) {
        if (at === element.contentEnd - 1) throw this.fail('not valid ASN.1 (truncated OBJECT IDENTIFIER).');
        continue;
      }
      if (arcs.length === 0) arcs.push(value < 40 ? 0 : value < 80 ? 1 : 2, value < 80 ? value % 40 : value - 80);
      else arcs.push(value);
      value = 0;
    }
    return arcs.join('.');
  }

  /** A two's complement INTEGER of at most 4 content octets. */
  smallInteger(element: BerElement): number | undefined {
    const length = element.contentEnd - element.contentStart;
    if (element.constructed || length === 0 || length > 4) return undefined;
    return this.bytes.readIntBE(element.contentStart, length);
  }

  /** An OCTET STRING's value; BER's constructed form (§8.7.3) is the concatenation of its segments. */
  octets(element: BerElement): Buffer {
    if (!element.constructed) return this.content(element);
    return Buffer.concat(
      this.children(element).map((segment) => {
        if (segment.tagClass !== UNIVERSAL || segment.tagNumber !== TAG.octetString) throw this.fail('not valid ASN.1 (a constructed OCTET STRING holds something else).');
        return this.octets(segment);
      }),
    );
  }
}

export const isUniversal = (element: BerElement | undefined, tag: number): element is BerElement => element !== undefined && element.tagClass === UNIVERSAL && element.tagNumber === tag;
export const isContextTag = (element: BerElement | undefined, tag: number): element is BerElement => element !== undefined && element.tagClass === CONTEXT && element.tagNumber === tag;
