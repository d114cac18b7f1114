// Checks the CMS blob (slot 0x10000) of a code signature: a detached SignedData over the primary
// CodeDirectory (Security signer.cpp signCodeDirectoryWithIdentity; ios-signing.md §9).
// src/signing/cms parses (keeping original bytes); node:crypto verifies, synchronously.
import { createHash, verify as cryptoVerify, type X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import { digestFromOid, isSelfSigned, OID, parseSignedData, x509Of, type ParsedSignedData } from '../../cms/index.ts';
import { parseXmlPlist } from '../../plist/index.ts';
import type { HashType } from './digest.ts';

export interface CmsDirectory {
  blob: Buffer;
  hashType: HashType;
  digest: Buffer;
}

export interface CmsReport {
  signerSubject?: string;
  signerCommonName?: string;
  signingTime?: Date;
  /** Subjects from leaf to root as found in the CMS certificates. */
  chain: string[];
  /** The same certificates, DER, leaf → root. */
  chainDer: Buffer[];
  certificates: Buffer[];
  problems: string[];
}

/** Verifies a DER SignedData over `directories[0].blob`; problems are reported, not thrown. */
export function verifyCodeSignatureCms(der: Buffer, directories: readonly CmsDirectory[], trustedRoots: readonly Buffer[] = []): CmsReport {
  const report: CmsReport = { chain: [], chainDer: [], certificates: [], problems: [] };
  const problem = (text: string): CmsReport => {
    report.problems.push(text);
    return report;
  };
  let signed: ParsedSignedData;
  try {
    signed = parseSignedData(der);
  } catch (error) {
    return problem(`CMS blob cannot be parsed: ${(error as Error).message}`);
  }
  report.certificates = signed.certificates;
  if (signed.content !== undefined) problem('CMS is not detached (it embeds content)');
  if (signed.signerInfos.length !== 1) return problem(`CMS has ${signed.signerInfos.length} signers, expected 1`);
  const signer = signed.signerInfos[0]!;
  const primary = directories[0];
  if (!primary) return problem('no CodeDirectory to check the CMS against');

  let certs: X509Certificate[];
  try {
    certs = signed.certificates.map((c) => x509Of(c));
  } catch (error) {
    return problem(`CMS certificate cannot be parsed: ${(error as Error).message}`);
  }
  const sid = signer.sid;
  const serialHex = (hex: string): string => hex.toUpperCase().replace(/^0+/, '');
  const leaf = 'serialNumber' in sid ? certs.find((c) => serialHex(c.serialNumber) === serialHex(sid.serialNumber.toString('hex'))) : undefined;
  if (!leaf) return problem('the signer certificate is not among the CMS certificates');
  report.signerSubject = leaf.subject.replaceAll('\n', ', ');
  report.signerCommonName = /(?:^|\n)CN=([^\n]*)/.exec(leaf.subject)?.[1];

  const digestName = digestFromOid(signer.digestAlgorithm);
  if (!digestName) return problem(`unsupported CMS digest ${signer.digestAlgorithm}`);
  if (!signer.signedAttributes || !signer.signedAttributesDer) return problem('CMS has no signed attributes');
  const attributes = signer.signedAttributes;
  const attr = (oid: string) => attributes.find((a) => a.type === oid);

  const contentType = attr(OID.contentType)?.parsed[0];
  if (!(contentType instanceof asn1js.ObjectIdentifier) || contentType.valueBlock.toString() !== OID.data) problem('contentType attribute is not id-data');
  const time = attr(OID.signingTime)?.parsed[0];
  if (time instanceof asn1js.UTCTime || time instanceof asn1js.GeneralizedTime) report.signingTime = time.toDate();

  const messageDigest = attr(OID.messageDigest)?.parsed[0];
  const expectedDigest = createHash(digestName).update(primary.blob).digest();
  if (!(messageDigest instanceof asn1js.OctetString)) problem('messageDigest attribute is missing');
  else if (!Buffer.from(messageDigest.valueBlock.valueHexView).equals(expectedDigest)) problem('messageDigest does not match the primary CodeDirectory');

  // CDHashes (plist of truncated cdhashes, CodeDirectory order) and CDHashes2 (one full digest per CD).
  const cdHashes = attr(OID.appleCdHashes)?.parsed[0];
  // Apple requires the cdhash list only when alternate directories must be bound to the signature
  // (cmssiginfo.c); a lone CodeDirectory is covered by messageDigest already (2015 Xcode output).
  if (!(cdHashes instanceof asn1js.OctetString)) {
    if (directories.length > 1) problem('CDHashes attribute (1.2.840.113635.100.9.1) is missing but there are alternate CodeDirectories');
  } else {
    try {
      const plist = parseXmlPlist(cdHashes.valueBlock.valueHexView);
      const list = plist.type === 'dict' ? plist.value.get('cdhashes') : undefined;
      const got = list?.type === 'array' ? list.value.map((v) => (v.type === 'data' ? Buffer.from(v.value).toString('hex') : '?')) : [];
      const want = directories.map((d) => d.digest.subarray(0, 20).toString('hex'));
      if (got.join() !== want.join()) problem('CDHashes plist does not list the CodeDirectory hashes');
    } catch {
      problem('CDHashes attribute is not a plist');
    }
  }
  const cdHashes2 = attr(OID.appleCdHashes2);
  if (cdHashes2) {
    const got = cdHashes2.parsed.map((v) => {
      const seq = v instanceof asn1js.Sequence ? v.valueBlock.value : [];
      const oid = seq[0] instanceof asn1js.ObjectIdentifier ? seq[0].valueBlock.toString() : '';
      const value = seq[1] instanceof asn1js.OctetString ? Buffer.from(seq[1].valueBlock.valueHexView).toString('hex') : '';
      return `${digestFromOid(oid) ?? oid}:${value}`;
    });
    const want = directories.map((d) => `${d.hashType.algorithm}:${d.digest.toString('hex')}`);
    if (got.sort().join() !== want.sort().join()) problem('CDHashes2 does not hold one full digest per CodeDirectory');
  }

  // The signature covers the DER of the signed attributes re-tagged as SET (RFC 5652 §5.4).
  const signedBytes = Buffer.from(signer.signedAttributesDer);
  signedBytes[0] = 0x31;
  let ok = false;
  try {
    ok = cryptoVerify(digestName, signedBytes, leaf.publicKey, signer.signature);
  } catch {
    ok = false;
  }
  if (!ok) problem('CMS signature does not verify with the signer certificate');

  checkChain(leaf, certs, trustedRoots, report);
  return report;
}

/** Leaf → root through the CMS certificates; each link's signature must verify. */
function checkChain(leaf: X509Certificate, certs: X509Certificate[], trustedRoots: readonly Buffer[], report: CmsReport): void {
  let current = leaf;
  report.chain.push(current.subject.replaceAll('\n', ', '));
  report.chainDer.push(current.raw);
  for (let depth = 0; depth < 8; depth++) {
    if (isSelfSigned(current.raw)) {
      if (trustedRoots.length > 0 && !trustedRoots.some((root) => x509Of(root).fingerprint256 === current.fingerprint256)) {
        report.problems.push(`chain ends at an untrusted root: ${current.subject.replaceAll('\n', ', ')}`);
      }
      return;
    }
    const issuer = certs.find((c) => c !== current && current.checkIssued(c) && current.verify(c.publicKey));
    if (!issuer) {
      report.problems.push(`certificate chain is incomplete: no issuer for ${current.subject.replaceAll('\n', ', ')} in the CMS (Apple embeds leaf + intermediate + root)`);
      return;
    }
    current = issuer;
    report.chain.push(current.subject.replaceAll('\n', ', '));
    report.chainDer.push(current.raw);
  }
  report.problems.push('certificate chain is too long');
}
