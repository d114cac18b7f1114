// Android v1 (JAR) signature block: META-INF/<NAME>.RSA / .EC. Byte-identical to apksig
// (V1SchemeSigner.generateSignatureBlock): SignedData version 1, digestAlgorithms and
// SignerInfo.digestAlgorithm = { sha1|sha256, NULL }, detached id-data, certificates as a DER-sorted
// SET OF (apksig's Asn1DerEncoder sorts SET OF), SignerInfo version 1 with IssuerAndSerialNumber,
// no signed attributes, signatureAlgorithm = rsaEncryption or id-ecPublicKey, each with NULL
// parameters (AlgorithmIdentifier.getSignerInfoSignatureAlgorithm), signature over the raw .SF.
import { SigningError } from '../errors.ts';
import { signDetached } from './cms-build.ts';
import type { Identity } from './identity.ts';

export interface JarSignatureOptions {
  /** The exact bytes of META-INF/<NAME>.SF. */
  signatureFile: Buffer;
  /** SHA-1 for minSdk < 18 (RSA), SHA-256 otherwise (android-signing.md §3.2). */
  digestAlgorithm: 'sha1' | 'sha256';
  signer: Identity;
  /** Certificates to embed; default: the signer's certificate and its chain. */
  certificates?: Buffer[];
}

export function signJarSignatureBlock(options: JarSignatureOptions): Buffer {
  if (options.signer.keyType === 'ec' && options.digestAlgorithm === 'sha1') {
    // apksig refuses ECDSA v1 signatures for minSdk < 18: older platforms cannot verify them.
    throw new SigningError('key_type_unsupported', 'ECDSA v1 (JAR) signatures need SHA-256, which requires minSdkVersion 18 or higher.');
  }
  return signDetached({
    content: options.signatureFile,
    digestAlgorithm: options.digestAlgorithm,
    signer: options.signer,
    certificates: options.certificates ?? [options.signer.certificate, ...options.signer.chain],
    certificateOrder: 'der',
    withSignedAttributes: false,
    ecSignatureAlgorithm: 'ec-public-key',
  });
}
