// The signing identity every signer consumes: a private key plus its certificate and whatever
// other certificates travelled with it. Loading lives in load-identity.ts; this file only holds
// the shape and the key checks shared by every keystore reader.
import { X509Certificate, createPublicKey, type KeyObject } from 'node:crypto';
import { SigningError } from '../errors.ts';

export type KeyType = 'rsa' | 'ec';
export type Curve = 'P-256' | 'P-384' | 'P-521';

export interface Identity {
  privateKey: KeyObject;
  keyType: KeyType;
  /** NIST curve name, only for EC keys. */
  curve?: Curve;
  /** The signer's certificate, DER. */
  certificate: Buffer;
  /** Other certificates that came with the key (intermediates, roots), DER, in store order. */
  chain: Buffer[];
  /** Keystore alias or PKCS#12 friendly name, when the container has one. */
  alias?: string;
}

const CURVES: Record<string, Curve> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/**
 * Classifies a private key. Only RSA and NIST-curve ECDSA are signing keys here: Apple code
 * signatures accept nothing else, and apksig signs v1 with RSA, EC or DSA — DSA signing is
 * refused on purpose (deprecated since Android 9 tooling, and Node cannot create DSA keys from
 * every encoding). Ed25519, DSA and other types raise key_type_unsupported.
 */
export function classifyKey(key: KeyObject): { keyType: KeyType; curve?: Curve } {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return { keyType: 'rsa' };
  if (type === 'ec') {
    const named = key.asymmetricKeyDetails?.namedCurve;
    const curve = named === undefined ? undefined : CURVES[named];
    if (curve === undefined) {
      throw new SigningError('key_type_unsupported', `EC keys on curve ${named ?? 'unknown'} are not supported; use P-256, P-384 or P-521.`, {
        details: { keyType: 'ec', curve: named },
      });
    }
    return { keyType: 'ec', curve };
  }
  throw new SigningError('key_type_unsupported', `${type ?? 'Unknown'} keys are not supported for signing; use an RSA or ECDSA (P-256) key.`, {
    details: { keyType: type },
  });
}

/** Parses a DER certificate or raises certificate_invalid. */
export function parseX509(der: Buffer): X509Certificate {
  try {
    return new X509Certificate(der);
  } catch (cause) {
    throw new SigningError('certificate_invalid', 'The certificate cannot be parsed as X.509.', { cause });
  }
}

/** True when the private key is the one whose public half the certificate carries. */
export function keyMatchesCertificate(privateKey: KeyObject, certificate: Buffer): boolean {
  const fromKey = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  let fromCert: Buffer;
  try {
    fromCert = parseX509(certificate).publicKey.export({ format: 'der', type: 'spki' });
  } catch (cause) {
    if (cause instanceof SigningError) throw cause;
    throw new SigningError('certificate_invalid', 'The public key in the certificate cannot be decoded.', { cause });
  }
  return fromKey.equals(fromCert);
}

/**
 * Builds an Identity from a key and candidate certificates: picks the certificate that matches
 * the key (first one when several do), keeps the rest as the chain, and checks the key type.
 */
export function assembleIdentity(privateKey: KeyObject, certificates: Buffer[], alias?: string): Identity {
  if (certificates.length === 0) {
    throw new SigningError('certificate_invalid', 'No certificate was found for the private key; pass the certificate as well.');
  }
  // Type first: a key we cannot sign with is the more useful error, and node cannot even decode
  // some certificate keys of those types (Ed25519 on OpenSSL 3.0).
  const { keyType, curve } = classifyKey(privateKey);
  const index = certificates.findIndex((der) => keyMatchesCertificate(privateKey, der));
  if (index < 0) {
    throw new SigningError('key_certificate_mismatch', 'The private key does not match the certificate' + (certificates.length > 1 ? 's provided.' : '.'));
  }
  const certificate = certificates[index] as Buffer;
  const chain = certificates.filter((_, i) => i !== index);
  const identity: Identity = { privateKey, keyType, certificate, chain };
  if (curve !== undefined) identity.curve = curve;
  if (alias !== undefined) identity.alias = alias;
  return identity;
}
