// The designated requirement codesign writes for an identity (Security drmaker.cpp DRMaker::make):
// - Apple-anchored iOS identities (WWDR intermediate with marker 1.2.840.113635.100.6.2.1):
//   identifier "<id>" and anchor apple generic and certificate leaf[subject.CN] = "<CN>" and
//   certificate 1[field.1.2.840.113635.100.6.2.1] exists   (ios-signing.md §7 golden bytes)
// - any other chain: identifier "<id>" and certificate <n> = H"<sha1>", where <n> is the highest
//   certificate still carrying the leaf's Organization ("root" when that is the anchor).
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { isSelfSigned, x509Of } from '../../cms/index.ts';
import { SigningError } from '../../errors.ts';
import { ANCHOR_CERT, LEAF_CERT, oidBytes, type Expr } from './requirements.ts';

/** WWDR intermediates carry this extension (DRMaker iosAppleDevOid). */
export const IOS_DEVELOPER_MARKER_OID = '1.2.840.113635.100.6.2.1';

/** SHA-1 of "Apple Root CA" (Requirement::appleAnchorHash) and "Apple Root CA - G3" (EC WWDR G2/G6). */
export const APPLE_ANCHOR_SHA1: ReadonlySet<string> = new Set(['611e5b662c593a08ff58d14ae22452d198df6c60', 'b52cb02fd567e0359fe8fa4d4c41037970fe01b0']);

export function appleDesignatedRequirement(identifier: string, leafCommonName: string): Expr {
  return {
    op: 'and',
    left: { op: 'ident', identifier },
    right: {
      op: 'and',
      left: { op: 'appleGenericAnchor' },
      right: {
        op: 'and',
        left: { op: 'certField', slot: LEAF_CERT, field: 'subject.CN', match: { op: 'equal', value: Buffer.from(leafCommonName, 'utf8') } },
        right: { op: 'certGeneric', slot: 1, oid: oidBytes(IOS_DEVELOPER_MARKER_OID), match: { op: 'exists' } },
      },
    },
  };
}

/**
 * DR for a certificate chain ordered leaf → root. A chain that does not end in a self-signed
 * root cannot be anchored and is refused (certificate_chain_incomplete).
 */
export function designatedRequirementFor(identifier: string, chain: readonly Buffer[]): Expr {
  if (chain.length === 0) throw new SigningError('certificate_chain_incomplete', 'No certificate to build a designated requirement from');
  const certs = chain.map((der) => x509Of(der));
  const anchor = certs[certs.length - 1]!;
  const anchorSha1 = createHash('sha1').update(chain[chain.length - 1]!).digest('hex');
  if (APPLE_ANCHOR_SHA1.has(anchorSha1) && certs.length >= 2 && hasExtension(chain[1]!, IOS_DEVELOPER_MARKER_OID)) {
    const cn = field(certs[0]!.subject, 'CN');
    if (cn === undefined) throw new SigningError('certificate_invalid', 'The signing certificate has no subject common name');
    return appleDesignatedRequirement(identifier, cn);
  }
  if (!isSelfSigned(chain[chain.length - 1]!)) {
    throw new SigningError('certificate_chain_incomplete', 'The certificate chain does not end in a self-signed root');
  }
  // DRMaker::nonAppleAnchor: climb while the Organization stays the leaf's.
  const organization = field(certs[0]!.subject, 'O');
  let slot = 0;
  if (organization !== undefined) {
    while (slot + 1 < certs.length && field(certs[slot + 1]!.subject, 'O') === organization) slot++;
    if (slot === certs.length - 1) slot = ANCHOR_CERT;
  }
  const index = slot === ANCHOR_CERT ? chain.length - 1 : slot;
  const hash = createHash('sha1').update(chain[index]!).digest();
  return { op: 'and', left: { op: 'ident', identifier }, right: { op: 'anchorHash', slot, hash } };
}

function field(subject: string, key: string): string | undefined {
  for (const line of subject.split('\n')) if (line.startsWith(`${key}=`)) return line.slice(key.length + 1);
  return undefined;
}

function hasExtension(der: Buffer, oid: string): boolean {
  try {
    const parsed = asn1js.fromBER(new Uint8Array(der));
    const cert = new pkijs.Certificate({ schema: parsed.result });
    return (cert.extensions ?? []).some((e) => e.extnID === oid);
  } catch {
    return false;
  }
}

