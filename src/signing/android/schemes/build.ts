// Encoding v2/v3/v3.1 signers and scheme blocks, byte for byte as apksig does
// (V2SchemeSigner.generateSignerBlock, V3SchemeSigner.generateSignerBlock).
import { lengthPrefixed, sequenceOfIdAndBytes, sequenceOfLengthPrefixed, u32 } from '../bytes.ts';
import type { IdAndBytes, Scheme } from './types.ts';

/** Additional attributes: a sequence of lp(u32 id || value). */
export function encodeAttributes(attributes: readonly IdAndBytes[]): Buffer {
  return sequenceOfLengthPrefixed(attributes.map(({ id, data }) => Buffer.concat([u32(id), data])));
}

export interface SignedDataInput {
  digests: readonly IdAndBytes[];
  certificates: readonly Buffer[];
  attributes: readonly IdAndBytes[];
  /** v3/v3.1 only. */
  minSdk?: number;
  maxSdk?: number;
}

export function encodeSignedData(scheme: Scheme, input: SignedDataInput): Buffer {
  const digests = sequenceOfIdAndBytes(input.digests);
  const certificates = sequenceOfLengthPrefixed(input.certificates);
  const attributes = encodeAttributes(input.attributes);
  if (scheme === 'v2') {
    // V2SchemeSigner: lp(digests) lp(certs) lp(attrs) and one more, empty, lp element that the
    // format reserves; verifiers ignore it, byte-identical output needs it.
    return sequenceOfLengthPrefixed([digests, certificates, attributes, Buffer.alloc(0)]);
  }
  if (input.minSdk === undefined || input.maxSdk === undefined) throw new Error('v3 signed data needs an SDK range');
  // V3SchemeSigner: lp(digests) lp(certs) u32 minSdk u32 maxSdk lp(attrs).
  return Buffer.concat([lengthPrefixed(digests), lengthPrefixed(certificates), u32(input.minSdk), u32(input.maxSdk), lengthPrefixed(attributes)]);
}

export interface SignerInput {
  signedData: Buffer;
  signatures: readonly IdAndBytes[];
  publicKey: Buffer;
  minSdk?: number;
  maxSdk?: number;
}

export function encodeSigner(scheme: Scheme, input: SignerInput): Buffer {
  const signatures = sequenceOfIdAndBytes(input.signatures);
  if (scheme === 'v2') return sequenceOfLengthPrefixed([input.signedData, signatures, input.publicKey]);
  if (input.minSdk === undefined || input.maxSdk === undefined) throw new Error('v3 signer needs an SDK range');
  return Buffer.concat([lengthPrefixed(input.signedData), u32(input.minSdk), u32(input.maxSdk), lengthPrefixed(signatures), lengthPrefixed(input.publicKey)]);
}

/** The value of a v2/v3/v3.1 pair: lp(sequence of lp(signer)). */
export function encodeSchemeBlock(signers: readonly Buffer[]): Buffer {
  return lengthPrefixed(sequenceOfLengthPrefixed(signers));
}
