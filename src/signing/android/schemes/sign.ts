// Producing one v2/v3/v3.1 signer: signed data over the content digests and certificates,
// signed with the signer's key (apksig V2SchemeSigner / V3SchemeSigner.generateSignerBlock).
import { X509Certificate, type KeyObject } from 'node:crypto';
import { SigningError } from '../../errors.ts';
import { signWith, type SignatureAlgorithm } from '../algorithms.ts';
import { encodeSignedData, encodeSigner } from './build.ts';
import type { IdAndBytes, Scheme } from './types.ts';

export interface SchemeSignerConfig {
  readonly privateKey: KeyObject;
  /** Signer certificate first, then the rest of its chain (DER). */
  readonly certificates: readonly Buffer[];
  readonly algorithm: SignatureAlgorithm;
  /** v3/v3.1: the platform range this signer covers. */
  readonly minSdk?: number;
  readonly maxSdk?: number;
  readonly attributes: readonly IdAndBytes[];
}

export function signSchemeSigner(scheme: Scheme, config: SchemeSignerConfig, contentDigest: Buffer): Buffer {
  const [leaf] = config.certificates;
  if (leaf === undefined) throw new SigningError('certificate_invalid', 'a signer needs a certificate');
  // apksig encodePublicKey: the certificate's SubjectPublicKeyInfo (re-encoded by the crypto
  // provider, which also normalises a negatively encoded RSA modulus).
  const publicKey = new X509Certificate(leaf).publicKey.export({ type: 'spki', format: 'der' });
  const signedData = encodeSignedData(scheme, {
    digests: [{ id: config.algorithm.id, data: contentDigest }],
    certificates: config.certificates,
    attributes: config.attributes,
    ...(scheme === 'v2' ? {} : { minSdk: config.minSdk!, maxSdk: config.maxSdk! }),
  });
  const signature = signWith(config.algorithm, signedData, config.privateKey);
  return encodeSigner(scheme, {
    signedData,
    signatures: [{ id: config.algorithm.id, data: signature }],
    publicKey,
    ...(scheme === 'v2' ? {} : { minSdk: config.minSdk!, maxSdk: config.maxSdk! }),
  });
}
