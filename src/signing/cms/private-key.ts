// Private keys and certificates that arrive as PEM or bare DER (openssl output, AOSP `.pk8` +
// `.x509.pem` test keys). node:crypto does the key decoding; this file only recognises which of
// the encodings it is and turns node's errors into catalogue codes.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import { SigningError } from '../errors.ts';
import { decodePem, parseAsn1 } from './der.ts';

export type DerKind = 'pkcs12' | 'pkcs8' | 'encrypted-pkcs8' | 'pkcs1' | 'sec1' | 'certificate';

/** Recognises a DER structure by shape, never by file name. */
export function classifyDer(bytes: Buffer): DerKind | undefined {
  let element: asn1js.AsnType;
  try {
    element = parseAsn1(bytes, 'keystore_invalid', 'DER input');
  } catch {
    return undefined;
  }
  if (!(element instanceof asn1js.Sequence)) return undefined;
  const [a, b, c] = element.valueBlock.value;
  const int = (x: unknown): number | undefined => (x instanceof asn1js.Integer && x.valueBlock.valueHexView.length <= 4 ? x.valueBlock.valueDec : undefined);
  // PFX ::= SEQUENCE { version INTEGER {v3(3)}, authSafe ContentInfo, macData MacData OPTIONAL }  (RFC 7292 §4)
  if (int(a) === 3 && b instanceof asn1js.Sequence) return 'pkcs12';
  // PrivateKeyInfo / OneAsymmetricKey ::= SEQUENCE { version 0|1, AlgorithmIdentifier, OCTET STRING, ... }  (RFC 5958)
  if ((int(a) === 0 || int(a) === 1) && b instanceof asn1js.Sequence && c instanceof asn1js.OctetString) return 'pkcs8';
  // EncryptedPrivateKeyInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING }  (RFC 5958 §3)
  if (a instanceof asn1js.Sequence && b instanceof asn1js.OctetString && element.valueBlock.value.length === 2) return 'encrypted-pkcs8';
  // RSAPrivateKey ::= SEQUENCE { version 0, n, e, d, p, q, ... }  (RFC 8017 A.1.2)
  if (int(a) === 0 && b instanceof asn1js.Integer && c instanceof asn1js.Integer) return 'pkcs1';
  // ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING, [0] params, [1] publicKey }  (RFC 5915)
  if (int(a) === 1 && b instanceof asn1js.OctetString) return 'sec1';
  // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm SEQUENCE, BIT STRING }
  if (a instanceof asn1js.Sequence && b instanceof asn1js.Sequence && c instanceof asn1js.BitString) return 'certificate';
  return undefined;
}

/** Decodes a DER private key of a known kind; encrypted PKCS#8 needs `password`. */
export function privateKeyFromDer(der: Buffer, kind: 'pkcs8' | 'encrypted-pkcs8' | 'pkcs1' | 'sec1', password?: string): KeyObject {
  const encrypted = kind === 'encrypted-pkcs8';
  if (encrypted && password === undefined) {
    throw new SigningError('key_password_incorrect', 'The private key is encrypted; a key password is required.');
  }
  const type = kind === 'encrypted-pkcs8' ? 'pkcs8' : kind;
  try {
    return createPrivateKey({ key: der, format: 'der', type, ...(encrypted ? { passphrase: password } : {}) });
  } catch (cause) {
    throw keyError(cause, encrypted);
  }
}

export interface PemContents {
  /** The first private key found, if any. */
  privateKey?: KeyObject;
  certificates: Buffer[];
}

const KEY_LABELS = new Set(['PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'DSA PRIVATE KEY']);

/**
 * Reads every certificate and the first private key of a PEM text. Encrypted keys (PKCS#8
 * "ENCRYPTED PRIVATE KEY" or legacy "Proc-Type: 4,ENCRYPTED" PKCS#1/SEC1) need `password`.
 */
export function readPem(text: string, password?: string): PemContents {
  const out: PemContents = { certificates: [] };
  for (const block of decodePem(text)) {
    if (block.label === 'CERTIFICATE' || block.label === 'X509 CERTIFICATE' || block.label === 'TRUSTED CERTIFICATE') {
      out.certificates.push(block.der);
    } else if (KEY_LABELS.has(block.label) && out.privateKey === undefined) {
      const encrypted = block.label === 'ENCRYPTED PRIVATE KEY' || (block.headers['Proc-Type'] ?? '').includes('ENCRYPTED');
      if (encrypted && password === undefined) {
        throw new SigningError('key_password_incorrect', 'The private key is encrypted; a key password is required.');
      }
      if (block.label === 'ENCRYPTED PRIVATE KEY' || !encrypted) {
        const kind = block.label === 'PRIVATE KEY' ? 'pkcs8' : block.label === 'ENCRYPTED PRIVATE KEY' ? 'encrypted-pkcs8' : block.label === 'RSA PRIVATE KEY' ? 'pkcs1' : block.label === 'EC PRIVATE KEY' ? 'sec1' : undefined;
        if (kind === undefined) {
          throw new SigningError('key_type_unsupported', `${block.label} keys are not supported for signing; use an RSA or ECDSA key.`);
        }
        out.privateKey = privateKeyFromDer(block.der, kind, password);
      } else {
        // Legacy OpenSSL PEM encryption lives in the armour headers, so node must see the PEM text.
        try {
          out.privateKey = createPrivateKey({ key: block.text, format: 'pem', passphrase: password });
        } catch (cause) {
          throw keyError(cause, true);
        }
      }
    }
  }
  return out;
}

/** Reads certificates given as DER or as PEM (one or more). */
export function readCertificates(bytes: Buffer): Buffer[] {
  if (looksLikePem(bytes)) {
    const certificates = readPem(bytes.toString('utf8')).certificates;
    if (certificates.length === 0) throw new SigningError('certificate_invalid', 'The PEM text holds no CERTIFICATE block.');
    return certificates;
  }
  if (classifyDer(bytes) !== 'certificate') throw new SigningError('certificate_invalid', 'The certificate is neither PEM nor a DER X.509 certificate.');
  return [bytes];
}

export function looksLikePem(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 4096).toString('latin1');
  return head.includes('-----BEGIN ');
}

function keyError(cause: unknown, encrypted: boolean): SigningError {
  const message = cause instanceof Error ? cause.message : String(cause);
  // An encrypted key that does not decode is almost always a wrong password (bad padding, or
  // garbage that is not DER); OpenSSL cannot tell the two apart either.
  if (encrypted) return new SigningError('key_password_incorrect', 'The private key password is incorrect.', { cause });
  if (/unsupported/i.test(message)) {
    return new SigningError('key_type_unsupported', `The private key uses an unsupported algorithm: ${message}`, { cause });
  }
  return new SigningError('keystore_invalid', `The private key cannot be decoded: ${message}`, { cause });
}
