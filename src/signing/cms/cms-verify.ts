// CMS SignedData verification (RFC 5652 §5.6): for `signet verify` (Apple code signatures),
// provisioning profiles (attached plists signed by Apple) and Android v1 signature blocks.
// Every signer must verify; the first signer's facts are returned.
import { X509Certificate, createHash, verify, constants } from 'node:crypto';
import * as asn1js from 'asn1js';
import { SigningError } from '../errors.ts';
import { parseCdHashesPlist, type CodeDirectoryHash } from './apple-code-signature.ts';
import { certificateParts, describeCertificate } from './certificate.ts';
import { buildChain, type ChainResult } from './chain.ts';
import { OID, bufferOf, digestFromOid, type DigestAlgorithm } from './der.ts';
import { readTlv } from './der-writer.ts';
import { parseSignedData, type ParsedAttribute, type ParsedSignerInfo } from './cms-parse.ts';
import { namesMatch } from './name-match.ts';

export interface VerifyOptions {
  /** The signed content when the SignedData is detached (Apple: the CodeDirectory; v1: the .SF). */
  detachedContent?: Buffer;
  /** Roots to validate the signer's certificate path against; no chain check without them. */
  trustedRoots?: Buffer[];
  /** Extra intermediates to build the path with, beyond those embedded. */
  intermediates?: Buffer[];
  /** Check every certificate's validity period at this time during chain building. */
  at?: Date;
}

export interface VerifiedSignedAttributes {
  contentType?: string;
  signingTime?: Date;
  messageDigest?: Buffer;
  /** Apple CDHashes (1.2.840.113635.100.9.1): the plist's cdhashes, 20 bytes each. */
  cdHashes?: Buffer[];
  /** Apple CDHashes2 (1.2.840.113635.100.9.2): full hashes with their algorithm. */
  cdHashes2?: Array<CodeDirectoryHash | { digestAlgorithm: string; hash: Buffer }>;
  all: ParsedAttribute[];
}

export interface VerifiedSignedData {
  contentType: string;
  /** The content the signature covers (encapsulated or the detached content given). */
  content: Buffer;
  digestAlgorithm: DigestAlgorithm;
  signatureAlgorithm: string;
  signerCertificate: Buffer;
  certificates: Buffer[];
  signedAttributes?: VerifiedSignedAttributes;
  signerCount: number;
  /** Present when trustedRoots were given. */
  chain?: ChainResult;
}

const invalid = (message: string, cause?: unknown): SigningError => new SigningError('cms_invalid', message, cause === undefined ? undefined : { cause });

const RSA_SIGNATURES: Record<string, DigestAlgorithm | undefined> = {
  [OID.rsaEncryption]: undefined,
  [OID.sha1WithRsa]: 'sha1',
  [OID.sha256WithRsa]: 'sha256',
  [OID.sha384WithRsa]: 'sha384',
  [OID.sha512WithRsa]: 'sha512',
};
const ECDSA_SIGNATURES: Record<string, DigestAlgorithm | undefined> = {
  [OID.ecPublicKey]: undefined,
  [OID.ecdsaWithSha1]: 'sha1',
  [OID.ecdsaWithSha256]: 'sha256',
  [OID.ecdsaWithSha384]: 'sha384',
  [OID.ecdsaWithSha512]: 'sha512',
};
// DSA verification only: Android v1 blocks may carry DSA (apksig writes dsa / dsaWithSHA256).
const DSA_SIGNATURES: Record<string, DigestAlgorithm | undefined> = {
  '1.2.840.10040.4.1': undefined,
  '1.2.840.10040.4.3': 'sha1',
  '2.16.840.1.101.3.4.3.2': 'sha256',
};

export function verifySignedData(der: Buffer, options: VerifyOptions = {}): VerifiedSignedData {
  try {
    return verifyUnguarded(der, options);
  } catch (error) {
    // Untrusted input: whatever a parser below throws becomes a catalogue error.
    if (error instanceof SigningError) throw error;
    throw invalid(`The CMS structure cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}

function verifyUnguarded(der: Buffer, options: VerifyOptions): VerifiedSignedData {
  const parsed = parseSignedData(der);
  let content: Buffer;
  if (parsed.content !== undefined) {
    if (options.detachedContent !== undefined && !options.detachedContent.equals(parsed.content)) {
      throw invalid('The SignedData carries content that differs from the detached content given.');
    }
    content = parsed.content;
  } else if (options.detachedContent !== undefined) {
    content = options.detachedContent;
  } else {
    throw invalid('The SignedData is detached; the signed content must be supplied.');
  }
  if (parsed.signerInfos.length === 0) throw invalid('The SignedData has no signer.');

  const results = parsed.signerInfos.map((info) => verifySigner(info, parsed.certificates, parsed.contentType, content));
  const first = results[0] as (typeof results)[number];
  const result: VerifiedSignedData = {
    contentType: parsed.contentType,
    content,
    digestAlgorithm: first.digestAlgorithm,
    signatureAlgorithm: first.signatureAlgorithm,
    signerCertificate: first.certificate,
    certificates: parsed.certificates,
    signerCount: results.length,
  };
  if (first.signedAttributes) result.signedAttributes = first.signedAttributes;
  if (options.trustedRoots !== undefined) {
    result.chain = buildChain(first.certificate, [...parsed.certificates, ...(options.intermediates ?? [])], options.trustedRoots, options.at);
  }
  return result;
}

function verifySigner(info: ParsedSignerInfo, certificates: Buffer[], contentType: string, content: Buffer) {
  const digestAlgorithm = digestFromOid(info.digestAlgorithm);
  if (digestAlgorithm === undefined) throw invalid(`Unsupported digest algorithm ${info.digestAlgorithm}.`);
  const certificate = findSignerCertificate(info, certificates);

  let signedData = content;
  let signedAttributes: VerifiedSignedAttributes | undefined;
  if (info.signedAttributesDer !== undefined && info.signedAttributes !== undefined) {
    signedAttributes = readAttributes(info.signedAttributes);
    // RFC 5652 §5.4/§11.1: with signed attributes present, contentType must match
    // eContentType and messageDigest must be the digest of the content.
    if (signedAttributes.contentType !== contentType) throw invalid('The contentType signed attribute is missing or does not match the content type.');
    const digest = createHash(digestAlgorithm).update(content).digest();
    if (signedAttributes.messageDigest === undefined || !signedAttributes.messageDigest.equals(digest)) {
      throw invalid('The messageDigest signed attribute does not match the content.');
    }
    // The signature covers the attributes' DER with the SET OF tag instead of [0] IMPLICIT.
    signedData = Buffer.concat([Buffer.from([0x31]), info.signedAttributesDer.subarray(1)]);
  }

  const hash = signatureHash(info.signatureAlgorithm, digestAlgorithm);
  let publicKey;
  try {
    publicKey = new X509Certificate(certificate).publicKey;
  } catch (cause) {
    throw new SigningError('certificate_invalid', "The signer certificate's public key cannot be decoded.", { cause });
  }
  const isRsa = info.signatureAlgorithm in RSA_SIGNATURES;
  let ok: boolean;
  try {
    ok = verify(hash, signedData, isRsa ? { key: publicKey, padding: constants.RSA_PKCS1_PADDING } : publicKey, info.signature);
  } catch (cause) {
    throw invalid('The signature cannot be checked with the signer certificate key.', cause);
  }
  if (!ok) throw invalid('The CMS signature does not verify with the signer certificate.');
  return { digestAlgorithm, signatureAlgorithm: info.signatureAlgorithm, certificate, signedAttributes };
}

function signatureHash(signatureAlgorithm: string, digestAlgorithm: DigestAlgorithm): DigestAlgorithm {
  for (const table of [RSA_SIGNATURES, ECDSA_SIGNATURES, DSA_SIGNATURES]) {
    if (signatureAlgorithm in table) {
      const fromOid = table[signatureAlgorithm];
      // A combined OID names its own hash; it must agree with digestAlgorithm (RFC 5652 §5.3).
      if (fromOid !== undefined && fromOid !== digestAlgorithm) throw invalid(`signatureAlgorithm ${signatureAlgorithm} does not match digestAlgorithm ${digestAlgorithm}.`);
      return digestAlgorithm;
    }
  }
  throw invalid(`Unsupported signature algorithm ${signatureAlgorithm} (RSA PKCS#1 v1.5, ECDSA and DSA are supported).`);
}

function findSignerCertificate(info: ParsedSignerInfo, certificates: Buffer[]): Buffer {
  const sid = info.sid;
  const found = certificates.find((certificate) => {
    if ('issuer' in sid) {
      const parts = certificateParts(certificate);
      // The serial INTEGER's content bytes, and the issuer as a name (RFC 5280 §7.1), not as
      // bytes: the SignerInfo may encode it with other string types than the certificate does.
      return parts.serial.subarray(readTlv(parts.serial).headerLength).equals(sid.serialNumber) && namesMatch(parts.issuer, sid.issuer);
    }
    return describeCertificate(certificate).subjectKeyId === sid.subjectKeyIdentifier.toString('hex');
  });
  if (!found) throw invalid('The signer certificate is not among the certificates in the SignedData.');
  return found;
}

function readAttributes(attributes: ParsedAttribute[]): VerifiedSignedAttributes {
  const out: VerifiedSignedAttributes = { all: attributes };
  const single = (attribute: ParsedAttribute): asn1js.AsnType => {
    // RFC 5652 §11: contentType, messageDigest and signingTime are single-valued.
    if (attribute.parsed.length !== 1) throw invalid(`Signed attribute ${attribute.type} must have exactly one value.`);
    return attribute.parsed[0] as asn1js.AsnType;
  };
  const seen = new Set<string>();
  for (const attribute of attributes) {
    if (seen.has(attribute.type)) throw invalid(`Signed attribute ${attribute.type} appears twice.`);
    seen.add(attribute.type);
    switch (attribute.type) {
      case OID.contentType: {
        const value = single(attribute);
        if (!(value instanceof asn1js.ObjectIdentifier)) throw invalid('The contentType attribute is not an OID.');
        out.contentType = value.valueBlock.toString();
        break;
      }
      case OID.messageDigest: {
        const value = single(attribute);
        if (!(value instanceof asn1js.OctetString)) throw invalid('The messageDigest attribute is not an OCTET STRING.');
        out.messageDigest = bufferOf(value.getValue());
        break;
      }
      case OID.signingTime: {
        const value = single(attribute);
        if (!(value instanceof asn1js.UTCTime) && !(value instanceof asn1js.GeneralizedTime)) throw invalid('The signingTime attribute is not a time.');
        out.signingTime = value.toDate();
        break;
      }
      case OID.appleCdHashes: {
        const value = single(attribute);
        if (!(value instanceof asn1js.OctetString)) throw invalid('The CDHashes attribute is not an OCTET STRING.');
        out.cdHashes = parseCdHashesPlist(bufferOf(value.getValue()));
        break;
      }
      case OID.appleCdHashes2:
        out.cdHashes2 = attribute.parsed.map((value) => {
          const [algorithm, hash] = value instanceof asn1js.Sequence ? value.valueBlock.value : [];
          if (!(algorithm instanceof asn1js.ObjectIdentifier) || !(hash instanceof asn1js.OctetString)) throw invalid('Malformed CDHashes2 value.');
          const oid = algorithm.valueBlock.toString();
          return { digestAlgorithm: digestFromOid(oid) ?? oid, hash: bufferOf(hash.getValue()) };
        });
        break;
      default:
        break;
    }
  }
  return out;
}
