// Signature algorithms of APK Signature Scheme v2/v3 (apksig SignatureAlgorithm.java) and the
// choice apksig makes for a given key (DefaultApkSignerEngine / V2SchemeSigner
// getSuggestedSignatureAlgorithms).
import { constants, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { SigningError } from '../errors.ts';

export type ContentDigestAlgorithm = 'CHUNKED_SHA256' | 'CHUNKED_SHA512' | 'VERITY_CHUNKED_SHA256';

export interface SignatureAlgorithm {
  readonly id: number;
  readonly name: string;
  readonly keyType: 'rsa' | 'ec' | 'dsa';
  readonly hash: 'sha256' | 'sha512';
  readonly pss: boolean;
  readonly contentDigest: ContentDigestAlgorithm;
  /** apksig SignatureAlgorithm.minSdkVersion: oldest platform that verifies it. */
  readonly minSdk: number;
}

const table: SignatureAlgorithm[] = [
  // apksig SignatureAlgorithm: RSASSA-PSS with MGF1 and a salt as long as the digest.
  { id: 0x0101, name: 'RSA_PSS_WITH_SHA256', keyType: 'rsa', hash: 'sha256', pss: true, contentDigest: 'CHUNKED_SHA256', minSdk: 24 },
  { id: 0x0102, name: 'RSA_PSS_WITH_SHA512', keyType: 'rsa', hash: 'sha512', pss: true, contentDigest: 'CHUNKED_SHA512', minSdk: 24 },
  { id: 0x0103, name: 'RSA_PKCS1_V1_5_WITH_SHA256', keyType: 'rsa', hash: 'sha256', pss: false, contentDigest: 'CHUNKED_SHA256', minSdk: 24 },
  { id: 0x0104, name: 'RSA_PKCS1_V1_5_WITH_SHA512', keyType: 'rsa', hash: 'sha512', pss: false, contentDigest: 'CHUNKED_SHA512', minSdk: 24 },
  { id: 0x0201, name: 'ECDSA_WITH_SHA256', keyType: 'ec', hash: 'sha256', pss: false, contentDigest: 'CHUNKED_SHA256', minSdk: 24 },
  { id: 0x0202, name: 'ECDSA_WITH_SHA512', keyType: 'ec', hash: 'sha512', pss: false, contentDigest: 'CHUNKED_SHA512', minSdk: 24 },
  { id: 0x0301, name: 'DSA_WITH_SHA256', keyType: 'dsa', hash: 'sha256', pss: false, contentDigest: 'CHUNKED_SHA256', minSdk: 24 },
  // Verity variants (apksigner --verity-enabled): Signet verifies but never emits them.
  { id: 0x0421, name: 'VERITY_RSA_PKCS1_V1_5_WITH_SHA256', keyType: 'rsa', hash: 'sha256', pss: false, contentDigest: 'VERITY_CHUNKED_SHA256', minSdk: 28 },
  { id: 0x0423, name: 'VERITY_ECDSA_WITH_SHA256', keyType: 'ec', hash: 'sha256', pss: false, contentDigest: 'VERITY_CHUNKED_SHA256', minSdk: 28 },
  { id: 0x0425, name: 'VERITY_DSA_WITH_SHA256', keyType: 'dsa', hash: 'sha256', pss: false, contentDigest: 'VERITY_CHUNKED_SHA256', minSdk: 28 },
];

const byId = new Map(table.map((algorithm) => [algorithm.id, algorithm]));

// RSASSA-PSS as Java's SHAxxxwithRSA/PSS: MGF1 with the same hash, salt as long as the digest.
const PSS_OPTIONS = {
  sha256: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
  sha512: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 },
} as const;

export function signatureAlgorithmById(id: number): SignatureAlgorithm | undefined {
  return byId.get(id);
}

/**
 * apksig V2SchemeSigner.getSuggestedSignatureAlgorithms: RSA up to 3072 bits signs with
 * PKCS#1 v1.5/SHA-256, longer keys with SHA-512; EC keys whose field is up to 256 bits use
 * ECDSA/SHA-256, larger curves ECDSA/SHA-512. Verity variants only on request (never here).
 */
export function algorithmForKey(key: KeyObject): SignatureAlgorithm {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    return byId.get(bits <= 3072 ? 0x0103 : 0x0104)!;
  }
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return byId.get(curve === 'prime256v1' ? 0x0201 : 0x0202)!;
  }
  throw new SigningError('key_type_unsupported', `${type ?? 'unknown'} keys cannot sign APKs here; use an RSA or EC (P-256) key`);
}

/** Java SHAxxxwithRSA / SHAxxxwithECDSA (DER) / RSASSA-PSS (MGF1 same hash, salt = hash length). */
export function signWith(algorithm: SignatureAlgorithm, data: Uint8Array, privateKey: KeyObject): Buffer {
  return sign(algorithm.hash, data, algorithm.pss ? { key: privateKey, ...PSS_OPTIONS[algorithm.hash] } : privateKey);
}

/** Verifies; a malformed key or signature counts as "does not verify", never a crash. */
export function verifyWith(algorithm: SignatureAlgorithm, data: Uint8Array, publicKeyDer: Buffer, signature: Buffer): boolean {
  try {
    const key = createPublicKey({ key: publicKeyDer, format: 'der', type: 'spki' });
    return verify(algorithm.hash, data, algorithm.pss ? { key, ...PSS_OPTIONS[algorithm.hash] } : key, signature);
  } catch {
    return false;
  }
}

/**
 * apksig ApkSigningBlockUtils.compareSignatureAlgorithm: when a signer carries several algorithms
 * the verifier prefers the strongest content digest: SHA-512 over verity over SHA-256.
 */
export function digestStrength(algorithm: SignatureAlgorithm): number {
  return algorithm.contentDigest === 'CHUNKED_SHA512' ? 3 : algorithm.contentDigest === 'VERITY_CHUNKED_SHA256' ? 2 : 1;
}
