// Small ASN.1/DER helpers over asn1js shared by the keystore readers, the CMS builder and the
// verifier: strict parsing (the whole input must be one element), PEM armour, OID names.
import * as asn1js from 'asn1js';
import { SigningError, type SigningErrorCode } from '../errors.ts';

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  encryptedData: '1.2.840.113549.1.7.6',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  appleCdHashes: '1.2.840.113635.100.9.1',
  appleCdHashes2: '1.2.840.113635.100.9.2',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha1WithRsa: '1.2.840.113549.1.1.5',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  sha384WithRsa: '1.2.840.113549.1.1.12',
  sha512WithRsa: '1.2.840.113549.1.1.13',
  ecPublicKey: '1.2.840.10045.2.1',
  ecdsaWithSha1: '1.2.840.10045.4.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  ecdsaWithSha384: '1.2.840.10045.4.3.3',
  ecdsaWithSha512: '1.2.840.10045.4.3.4',
  pbes2: '1.2.840.113549.1.5.13',
  pkcs12KeyBag: '1.2.840.113549.1.12.10.1.1',
  pkcs12ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  pkcs12CertBag: '1.2.840.113549.1.12.10.1.3',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  caIssuers: '1.3.6.1.5.5.7.48.2',
} as const;

export type DigestAlgorithm = 'sha1' | 'sha256' | 'sha384' | 'sha512';

export const DIGEST_OIDS: Record<DigestAlgorithm, string> = { sha1: OID.sha1, sha256: OID.sha256, sha384: OID.sha384, sha512: OID.sha512 };

export function digestFromOid(oid: string): DigestAlgorithm | undefined {
  return (Object.keys(DIGEST_OIDS) as DigestAlgorithm[]).find((name) => DIGEST_OIDS[name] === oid);
}

/** A fresh ArrayBuffer holding exactly these bytes (asn1js/pkijs want ArrayBuffers). */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

export function bufferOf(bytes: ArrayBuffer | Uint8Array): Buffer {
  return bytes instanceof ArrayBuffer ? Buffer.from(bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Parses one BER element spanning all of `bytes`; anything else raises `code`. */
export function parseAsn1(bytes: Uint8Array, code: SigningErrorCode, what: string): asn1js.AsnType {
  assertNestingDepth(bytes, code, what);
  let parsed: ReturnType<typeof asn1js.fromBER>;
  try {
    parsed = asn1js.fromBER(toArrayBuffer(bytes));
  } catch (cause) {
    // asn1js throws (rather than reporting) on some malformed primitives, e.g. bad time strings.
    throw new SigningError(code, `${what}: not valid ASN.1 (${cause instanceof Error ? cause.message : String(cause)}).`, { cause });
  }
  if (parsed.offset === -1 || parsed.result.error) {
    throw new SigningError(code, `${what}: not valid ASN.1 (${parsed.result.error || 'decode error'}).`);
  }
  if (parsed.offset !== bytes.byteLength) {
    throw new SigningError(code, `${what}: ${bytes.byteLength - parsed.offset} trailing bytes after the ASN.1 structure.`);
  }
  return parsed.result;
}

/** The DER of an asn1js element as a Buffer. */
export function encodeDer(element: { toBER(sizeOnly?: boolean): ArrayBuffer }): Buffer {
  return Buffer.from(element.toBER(false));
}

export interface PemBlock {
  label: string;
  /** The block exactly as it appeared, armour included. */
  text: string;
  headers: Record<string, string>;
  der: Buffer;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** Every PEM block in a text, in order (RFC 7468; legacy "Proc-Type" headers are kept). */
export function decodePem(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(PEM_BLOCK)) {
    const label = match[1] as string;
    const body = match[2] as string;
    const headers: Record<string, string> = {};
    const split = body.split(/\r?\n\r?\n/);
    let base64 = body;
    if (split.length > 1 && /^[A-Za-z-]+:/.test(body)) {
      for (const line of (split[0] as string).split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      }
      base64 = split.slice(1).join('\n');
    }
    blocks.push({ label, text: match[0], headers, der: Buffer.from(base64.replace(/\s+/g, ''), 'base64') });
  }
  return blocks;
}

export function encodePem(der: Buffer, label: string): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * Deepest nesting of constructed elements parseAsn1 accepts. X.509 certificates nest about ten
 * levels (X.690 TLVs inside Certificate → TBSCertificate → extensions → …), CMS with embedded
 * certificates about twenty; asn1js recurses once per level, so a hostile file nesting
 * thousands of levels would otherwise exhaust the stack instead of failing with a clear error.
 */
export const MAX_DER_DEPTH = 64;

/**
 * Walks the TLV headers (X.690 §8.1) without building anything and refuses nesting deeper than
 * MAX_DER_DEPTH. Malformed headers end the walk quietly: the real parser reports them.
 */
function assertNestingDepth(bytes: Uint8Array, code: SigningErrorCode, what: string): void {
  const ends: number[] = []; // end offset of each open constructed element; -1: indefinite length (BER)
  let at = 0;
  while (at < bytes.length) {
    while (ends.length > 0 && ends[ends.length - 1] !== -1 && at >= (ends[ends.length - 1] as number)) ends.pop();
    const tag = bytes[at] as number;
    if (tag === 0 && bytes[at + 1] === 0 && ends[ends.length - 1] === -1) {
      ends.pop(); // end-of-contents of an indefinite-length element (X.690 §8.1.5)
      at += 2;
      continue;
    }
    at += 1;
    if ((tag & 0x1f) === 0x1f) {
      while (at < bytes.length && ((bytes[at] as number) & 0x80) !== 0) at += 1; // high tag number form, §8.1.2.4
      at += 1;
    }
    if (at >= bytes.length) return;
    const first = bytes[at++] as number;
    let length = first;
    const indefinite = first === 0x80;
    if (first > 0x80) {
      const count = first & 0x7f;
      if (count > 6 || at + count > bytes.length) return;
      length = 0;
      for (let i = 0; i < count; i += 1) length = length * 256 + (bytes[at++] as number);
    }
    if ((tag & 0x20) !== 0) {
      ends.push(indefinite ? -1 : at + length);
      if (ends.length > MAX_DER_DEPTH) throw new SigningError(code, `${what}: ASN.1 nesting deeper than ${MAX_DER_DEPTH} levels.`);
    } else {
      if (indefinite) return;
      at += length;
    }
  }
}
