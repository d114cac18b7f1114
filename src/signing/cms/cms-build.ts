// CMS SignedData (RFC 5652) builder for both platforms' signatures: Apple code signatures
// (detached over the CodeDirectory, with signed attributes) and Android v1 JAR signature blocks
// (detached over the .SF file, no signed attributes, byte-identical to apksig). Encoding is done
// with der-writer.ts so that certificate and name bytes are spliced verbatim; node:crypto signs.
import { createHash, sign } from 'node:crypto';
import { SigningError } from '../errors.ts';
import { DIGEST_OIDS, OID, type DigestAlgorithm } from './der.ts';
import { NULL, algorithmIdentifier, octetString, oid, sequence, setOf, signingTimeValue, smallInteger, tlv } from './der-writer.ts';
import { certificateParts } from './certificate.ts';
import type { Identity } from './identity.ts';

export interface SignedAttribute {
  /** Attribute type OID. */
  type: string;
  /** DER of each AttributeValue in the attribute's SET. */
  values: Buffer[];
}

export interface SignOptions {
  /** The content being signed (detached unless `encapsulate`). */
  content?: Buffer;
  /** Its digest under `digestAlgorithm`, when the caller hashed it already (signed attributes only). */
  contentDigest?: Buffer;
  digestAlgorithm: DigestAlgorithm;
  signer: Identity;
  /** Certificates to embed; default: the signer's certificate followed by its chain. */
  certificates?: Buffer[];
  /**
   * 'der' (default) sorts the certificates SET OF as DER requires and as apksig does;
   * 'given' keeps the caller's order (Apple embeds intermediate, root, leaf).
   */
  certificateOrder?: 'der' | 'given';
  /** false: the signature is over the content itself (Android v1). true: over the signed attributes. */
  withSignedAttributes: boolean;
  signedAttributes?: {
    /** eContentType and the contentType attribute; default id-data. */
    contentType?: string;
    /** signingTime attribute; default now; null leaves the attribute out. */
    signingTime?: Date | null;
    /** Further attributes, after contentType, signingTime and messageDigest, in this order. */
    extra?: SignedAttribute[];
    /**
     * 'given' (default) writes contentType, signingTime, messageDigest, then `extra` — Apple's
     * order, which Apple's own verifier is known to accept. 'der' sorts them as DER SET OF.
     * Verifiers hash the embedded bytes either way (OpenSSL verifies with CMS_Attributes_Verify,
     * which keeps the order).
     */
    order?: 'given' | 'der';
  };
  /**
   * How an ECDSA signerInfo names its signatureAlgorithm: 'ecdsa-with-digest' (RFC 5754,
   * e.g. ecdsa-with-SHA256 without parameters; Apple and OpenSSL) or 'ec-public-key'
   * (id-ecPublicKey with NULL parameters; what apksig writes in v1 signature blocks).
   */
  ecSignatureAlgorithm?: 'ecdsa-with-digest' | 'ec-public-key';
  /** Put the content inside the SignedData (attached), as provisioning profiles do. */
  encapsulate?: boolean;
}

const ECDSA_WITH: Record<DigestAlgorithm, string> = { sha1: OID.ecdsaWithSha1, sha256: OID.ecdsaWithSha256, sha384: OID.ecdsaWithSha384, sha512: OID.ecdsaWithSha512 };

/** Builds and signs a CMS SignedData; returns the DER ContentInfo. */
export function signDetached(options: SignOptions): Buffer {
  return build(options, (data) => sign(options.digestAlgorithm, data, options.signer.privateKey));
}

/** Alias of signDetached with `encapsulate: true`, for readability at call sites. */
export function signAttached(options: Omit<SignOptions, 'encapsulate'>): Buffer {
  return signDetached({ ...options, encapsulate: true });
}

/**
 * The size of the DER that signDetached will return for these options, computed by building the
 * structure around a placeholder signature of the maximum length. RSA signatures always have the
 * modulus length, so for RSA this is exact. An ECDSA signature is a DER SEQUENCE of two INTEGERs
 * whose lengths vary (a leading 0x00 when the top bit is set, fewer bytes when leading bytes are
 * zero): for P-256 the maximum is 72 bytes and real signatures are 70–72 bytes almost always, so
 * the result is an upper bound and the caller pads (Mach-O signers zero-fill the reserved slot).
 * Content is not needed; a signing time is (its encoding length can change in 2050).
 */
export function estimateSignatureSize(options: Omit<SignOptions, 'content' | 'contentDigest'> & { contentLength?: number }): number {
  const placeholder = Buffer.alloc(maxSignatureLength(options.signer));
  const digestLength = createHash(options.digestAlgorithm).digest().length;
  // Detached content never reaches the output; attached content counts with its length.
  const content = Buffer.alloc(options.encapsulate ? (options.contentLength ?? 0) : 0);
  const built = build({ ...options, content, contentDigest: Buffer.alloc(digestLength) }, () => placeholder);
  return built.length;
}

/** Upper bound of the raw signature value for this key (RSA: exact). */
export function maxSignatureLength(signer: Identity): number {
  const details = signer.privateKey.asymmetricKeyDetails ?? {};
  if (signer.keyType === 'rsa') return Math.ceil((details.modulusLength ?? 0) / 8);
  const fieldBytes = { 'P-256': 32, 'P-384': 48, 'P-521': 66 }[signer.curve ?? 'P-256'];
  // Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } (RFC 5480 / X9.62); each INTEGER at
  // most fieldBytes + 1 (sign byte).
  const integer = 1 + derLengthSize(fieldBytes + 1) + fieldBytes + 1;
  return 1 + derLengthSize(2 * integer) + 2 * integer;
}

function derLengthSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 4;
}

function build(options: SignOptions, signer: (data: Buffer) => Buffer): Buffer {
  const { digestAlgorithm, signer: identity } = options;
  const digestOid = DIGEST_OIDS[digestAlgorithm];
  if (!digestOid) throw new SigningError('cms_invalid', `Unknown digest algorithm ${String(digestAlgorithm)}.`);
  const contentType = options.signedAttributes?.contentType ?? OID.data;
  if (options.encapsulate && options.content === undefined) throw new SigningError('cms_invalid', 'Attached signatures need the content.');

  // digestAlgorithm AlgorithmIdentifier with explicit NULL parameters, as apksig and Apple write it.
  const digestAlgorithmId = algorithmIdentifier(digestOid, NULL);

  let signedAttributes: Buffer | undefined;
  let toSign: Buffer;
  if (options.withSignedAttributes) {
    const digest = options.contentDigest ?? (options.content ? createHash(digestAlgorithm).update(options.content).digest() : undefined);
    if (digest === undefined) throw new SigningError('cms_invalid', 'Signing needs the content or its digest.');
    const attributes: Buffer[] = [attribute(OID.contentType, [oid(contentType)])];
    const signingTime = options.signedAttributes?.signingTime === undefined ? new Date() : options.signedAttributes.signingTime;
    if (signingTime !== null) attributes.push(attribute(OID.signingTime, [signingTimeValue(signingTime)]));
    attributes.push(attribute(OID.messageDigest, [octetString(digest)]));
    for (const extra of options.signedAttributes?.extra ?? []) attributes.push(attribute(extra.type, extra.values));
    const sorted = options.signedAttributes?.order === 'der';
    // RFC 5652 §5.4: the signature covers the DER of the attributes with an EXPLICIT SET OF tag
    // (0x31), while the SignerInfo carries them as [0] IMPLICIT (0xA0). Same bytes otherwise.
    const asSet = setOf(attributes, sorted);
    toSign = asSet;
    signedAttributes = Buffer.concat([Buffer.from([0xa0]), asSet.subarray(1)]);
  } else {
    if (options.content === undefined) throw new SigningError('cms_invalid', 'Without signed attributes the signature is over the content itself, so the content is needed.');
    toSign = options.content;
  }

  const signature = signer(toSign);
  const certificates = options.certificates ?? [identity.certificate, ...identity.chain];
  const signerInfo = sequence(
    smallInteger(1), // RFC 5652 §5.3: version 1 with issuerAndSerialNumber
    issuerAndSerialNumber(identity.certificate),
    digestAlgorithmId,
    ...(signedAttributes ? [signedAttributes] : []),
    signatureAlgorithmId(identity, digestAlgorithm, options.ecSignatureAlgorithm ?? 'ecdsa-with-digest'),
    octetString(signature),
  );
  const encapContentInfo =
    options.encapsulate && options.content !== undefined ? sequence(oid(contentType), tlv(0xa0, octetString(options.content))) : sequence(oid(contentType));
  const signedData = sequence(
    // RFC 5652 §5.1: version 1 when there are no attribute certificates, other-format entries or
    // v3 SignerInfos and eContentType is id-data. A non-data eContentType needs version 3.
    smallInteger(contentType === OID.data ? 1 : 3),
    setOf([digestAlgorithmId]),
    encapContentInfo,
    setOf(certificates, (options.certificateOrder ?? 'der') === 'der', 0xa0),
    setOf([signerInfo]),
  );
  return sequence(oid(OID.signedData), tlv(0xa0, signedData));
}

function attribute(type: string, values: Buffer[]): Buffer {
  // Attribute ::= SEQUENCE { attrType OID, attrValues SET OF AttributeValue }
  return sequence(oid(type), setOf(values));
}

function signatureAlgorithmId(identity: Identity, digest: DigestAlgorithm, ecStyle: 'ecdsa-with-digest' | 'ec-public-key'): Buffer {
  // RSA: rsaEncryption with NULL (RFC 3370 §3.2 allows it; apksig, Apple's 2018 output and OpenSSL
  // all write it), which keeps the digest choice in digestAlgorithm.
  if (identity.keyType === 'rsa') return algorithmIdentifier(OID.rsaEncryption, NULL);
  if (ecStyle === 'ec-public-key') return algorithmIdentifier(OID.ecPublicKey, NULL);
  // RFC 5754 §3.3: ecdsa-with-SHA* have absent parameters.
  return algorithmIdentifier(ECDSA_WITH[digest]);
}

/**
 * IssuerAndSerialNumber ::= SEQUENCE { issuer Name, serialNumber INTEGER }, with both taken
 * verbatim from the certificate's TBSCertificate (apksig: issuer X500Principal.getEncoded()).
 */
export function issuerAndSerialNumber(certificate: Buffer): Buffer {
  const { issuer, serial } = certificateParts(certificate);
  return sequence(issuer, serial);
}
