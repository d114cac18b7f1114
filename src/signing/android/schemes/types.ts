// The shape of one signer inside an APK Signature Scheme v2, v3 or v3.1 block. v3 and v3.1 share
// an encoding (V3SchemeSigner); they differ from v2 by the SDK range in the signer and in the
// signed data. See SPECIFICATION.md §"v2/v3 blocks".
export type Scheme = 'v2' | 'v3' | 'v3.1';

export interface IdAndBytes {
  readonly id: number;
  readonly data: Buffer;
}

export interface SignedData {
  /** (signature algorithm ID, content digest) pairs. */
  readonly digests: readonly IdAndBytes[];
  /** X.509 DER certificates; the first one's key must equal the signer's public key. */
  readonly certificates: readonly Buffer[];
  /** v3/v3.1 only: the platform range this signer covers. */
  readonly minSdk: number | null;
  readonly maxSdk: number | null;
  /** Additional attributes: (ID, raw value). */
  readonly attributes: readonly IdAndBytes[];
}

export interface SchemeSigner {
  /** The exact signed-data bytes the signatures cover (without their length prefix). */
  readonly signedDataBytes: Buffer;
  readonly signedData: SignedData;
  /** v3/v3.1 only: the SDK range repeated outside the signed data; both must match. */
  readonly minSdk: number | null;
  readonly maxSdk: number | null;
  readonly signatures: readonly IdAndBytes[];
  /** SubjectPublicKeyInfo DER. */
  readonly publicKey: Buffer;
}
