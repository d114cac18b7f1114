// Minimal DER writer for the CMS builder. Hand-written rather than pkijs' toSchema()/toBER():
// the Android v1 signature block must be byte-identical to apksig's output, which means splicing
// certificates and issuer names as their original bytes, DER-sorting SET OF exactly as apksig's
// Asn1DerEncoder does, and knowing every length up front (estimateSignatureSize). X.690 §8/§10.
import { SigningError } from '../errors.ts';

export function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

export const sequence = (...content: Buffer[]): Buffer => tlv(0x30, ...content);

/**
 * SET OF. X.690 §11.6: DER orders the encodings ascending, shorter-is-smaller on a common prefix
 * — the same comparison as apksig's ByteArrayLexicographicComparator. `sort: false` keeps the
 * caller's order (Apple's signed attributes, see cms-build.ts).
 */
export function setOf(elements: Buffer[], sort = true, tag = 0x31): Buffer {
  const ordered = sort ? [...elements].sort(Buffer.compare) : elements;
  return tlv(tag, ...ordered);
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  if (parts.length < 2 || parts.some((p) => !Number.isSafeInteger(p) || p < 0)) throw new SigningError('cms_invalid', `Bad OID ${dotted}.`);
  const out: number[] = [40 * (parts[0] as number) + (parts[1] as number)];
  for (const part of parts.slice(2)) {
    const chunk = [part & 0x7f];
    for (let v = Math.floor(part / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

export function smallInteger(value: number): Buffer {
  if (!Number.isInteger(value) || value < 0 || value > 127) throw new RangeError('smallInteger takes 0..127');
  return tlv(0x02, Buffer.from([value]));
}

export const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
export const NULL = Buffer.from([0x05, 0x00]);

/** RFC 5652 §11.3: UTCTime for 1950–2049, GeneralizedTime otherwise; seconds, "Z", no fractions. */
export function signingTimeValue(date: Date): Buffer {
  const year = date.getUTCFullYear();
  const digits = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return year >= 1950 && year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'latin1')) : tlv(0x18, Buffer.from(`${digits}Z`, 'latin1'));
}

/** AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL } */
export function algorithmIdentifier(algorithm: string, parameters?: Buffer): Buffer {
  return parameters === undefined ? sequence(oid(algorithm)) : sequence(oid(algorithm), parameters);
}

/** Splits one DER TLV at the start of `der` into its parts (used to re-tag and to splice). */
export function readTlv(der: Buffer, offset = 0): { tag: number; headerLength: number; length: number; end: number } {
  const tag = der[offset];
  const first = der[offset + 1];
  if (tag === undefined || first === undefined) throw new SigningError('cms_invalid', 'Truncated DER element.');
  let len = first;
  let headerLength = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4) throw new SigningError('cms_invalid', 'Unsupported DER length encoding.');
    len = 0;
    for (let i = 0; i < count; i++) {
      const byte = der[offset + 2 + i];
      if (byte === undefined) throw new SigningError('cms_invalid', 'Truncated DER length.');
      len = len * 256 + byte;
    }
    headerLength += count;
  }
  const end = offset + headerLength + len;
  if (end > der.length) throw new SigningError('cms_invalid', 'DER element runs past the end of its container.');
  return { tag, headerLength, length: len, end };
}
