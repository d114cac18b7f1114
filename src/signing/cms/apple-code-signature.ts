// The CMS blob of an Apple code signature (SuperBlob slot 0x10000, CSMAGIC_BLOBWRAPPER). Layout
// follows Apple's output and Security.framework (SecCodeSigner signCodeDirectory, cmssiginfo.c
// CMSAddAgileHashToAttribute): a detached SignedData over the primary CodeDirectory blob with
// signed attributes contentType, signingTime, messageDigest, CDHashes2 and CDHashes, and the
// certificate chain up to the root embedded (kCMSCertificateChainWithRootOrFail).
import { SigningError } from '../errors.ts';
import { parsePlist, plistArray, plistData, plistDict, writeXmlPlist } from '../plist/index.ts';
import { DIGEST_OIDS, OID, type DigestAlgorithm } from './der.ts';
import { octetString, oid, sequence } from './der-writer.ts';
import { estimateSignatureSize, signDetached, type SignedAttribute } from './cms-build.ts';
import type { Identity } from './identity.ts';

export interface CodeDirectoryHash {
  /** The CodeDirectory's hashType as a digest name. */
  digestAlgorithm: DigestAlgorithm;
  /** Full digest of that CodeDirectory blob's bytes (its cdhash before truncation). */
  hash: Buffer;
}

export interface CodeSignatureOptions {
  /** Bytes of the primary (slot 0) CodeDirectory blob — the detached content. */
  codeDirectory: Buffer;
  /** One entry per CodeDirectory, in slot order (slot 0 first, then alternates 0x1000…). */
  codeDirectoryHashes: CodeDirectoryHash[];
  signer: Identity;
  /** Certificates to embed, Apple's order: intermediate(s), root, then the leaf is appended. */
  chain: Buffer[];
  signingTime?: Date;
}

/** Apple truncates every cdhash in the CDHashes plist to 20 bytes (CS_CDHASH_LEN). */
const CDHASH_LENGTH = 20;

/** The 1.2.840.113635.100.9.1 value: an XML plist { cdhashes: [<data> 20 bytes </data>, …] }. */
export function cdHashesPlist(hashes: CodeDirectoryHash[]): Buffer {
  return writeXmlPlist(plistDict({ cdhashes: plistArray(hashes.map((h) => plistData(h.hash.subarray(0, CDHASH_LENGTH)))) }));
}

/**
 * Apple's two CDHash attributes, in the order Apple writes them: CDHashes2
 * (SET OF SEQUENCE { digest OID, OCTET STRING full hash }, one per CodeDirectory) and CDHashes
 * (SET { OCTET STRING plist }).
 */
export function appleCdHashAttributes(hashes: CodeDirectoryHash[]): SignedAttribute[] {
  if (hashes.length === 0) throw new SigningError('code_signature_invalid', 'A code signature needs at least one CodeDirectory hash.');
  return [
    { type: OID.appleCdHashes2, values: hashes.map((h) => sequence(oid(DIGEST_OIDS[h.digestAlgorithm]), octetString(h.hash))) },
    { type: OID.appleCdHashes, values: [octetString(cdHashesPlist(hashes))] },
  ];
}

/**
 * Signs a CodeDirectory. messageDigest is SHA-256 of the primary CodeDirectory even when that
 * CodeDirectory is SHA-1 (Apple's agile signatures do the same); signatureAlgorithm is
 * rsaEncryption for RSA and ecdsa-with-SHA256 for EC keys.
 */
export function signCodeDirectory(options: CodeSignatureOptions): Buffer {
  return signDetached(codeSignatureSignOptions(options, options.codeDirectory));
}

/**
 * Maximum size of signCodeDirectory's output for this identity, chain and CodeDirectory set
 * (exact for RSA; an upper bound a few bytes above typical ECDSA output). The Mach-O signer
 * reserves this much and zero-pads.
 */
export function estimateCodeSignatureSize(options: Omit<CodeSignatureOptions, 'codeDirectory'>): number {
  const { content: _content, ...rest } = codeSignatureSignOptions({ ...options, codeDirectory: Buffer.alloc(0) }, Buffer.alloc(0));
  return estimateSignatureSize(rest);
}

function codeSignatureSignOptions(options: CodeSignatureOptions, content: Buffer) {
  return {
    content,
    digestAlgorithm: 'sha256' as const,
    signer: options.signer,
    certificates: [...options.chain.filter((c) => !c.equals(options.signer.certificate)), options.signer.certificate],
    certificateOrder: 'given' as const,
    withSignedAttributes: true,
    signedAttributes: {
      signingTime: options.signingTime ?? new Date(),
      extra: appleCdHashAttributes(options.codeDirectoryHashes),
      order: 'given' as const,
    },
    ecSignatureAlgorithm: 'ecdsa-with-digest' as const,
  };
}

/** Reads the cdhashes array back out of a CDHashes attribute plist. */
export function parseCdHashesPlist(plist: Buffer): Buffer[] {
  let parsed;
  try {
    parsed = parsePlist(plist).value;
  } catch (cause) {
    throw new SigningError('cms_invalid', 'The CDHashes attribute does not hold a property list.', { cause });
  }
  const list = parsed.type === 'dict' ? parsed.value.get('cdhashes') : undefined;
  if (list?.type !== 'array' || list.value.some((v) => v.type !== 'data')) {
    throw new SigningError('cms_invalid', 'The CDHashes attribute plist has no cdhashes array of data.');
  }
  return list.value.map((v) => Buffer.from((v as { value: Uint8Array }).value));
}
