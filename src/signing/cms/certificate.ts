// Read-only facts about an X.509 certificate, for the UI (certificate upload), for picking the
// chain, and for the signers (Apple team id). pkijs parses; node:crypto hashes and sizes keys.
import { X509Certificate, createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { SigningError } from '../errors.ts';
import { CertificateMemo } from './certificate-memo.ts';
import { OID, bufferOf, parseAsn1 } from './der.ts';
import { readTlv } from './der-writer.ts';

export interface CertificateInfo {
  /** RFC 4514 string, most significant RDN last as the RFC orders it ("CN=…,OU=…,O=…,C=US"). */
  subject: string;
  subjectCommonName?: string;
  issuer: string;
  issuerCommonName?: string;
  /** Serial number, upper-case hex without separators (as Keychain and openssl show it). */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  /** Upper-case hex; the SHA-1 is what Apple tools call the identity hash. */
  sha1: string;
  sha256: string;
  /** Apple team id: the subject OU of Apple development/distribution certificates (10 characters). */
  teamId?: string;
  organization?: string;
  keyType: 'rsa' | 'ec' | 'dsa' | 'ed25519' | 'ed448' | 'x25519' | 'x448' | 'unknown';
  /** Modulus bits (RSA, DSA) or curve bits (EC); undefined when the key cannot be decoded. */
  keySize?: number;
  curve?: string;
  isCA: boolean;
  selfIssued: boolean;
  /** Hex key identifiers (RFC 5280 4.2.1.1/4.2.1.2), used to link a certificate to its issuer. */
  subjectKeyId?: string;
  authorityKeyId?: string;
  /** AIA caIssuers URLs (RFC 5280 4.2.2.1): where the issuer certificate can be downloaded. */
  caIssuers: string[];
}

const SHORT_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.6': 'C',
  '2.5.4.9': 'STREET',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '2.5.4.5': 'serialNumber',
};

const KEY_ALGORITHMS: Record<string, CertificateInfo['keyType']> = {
  [OID.rsaEncryption]: 'rsa',
  [OID.ecPublicKey]: 'ec',
  '1.2.840.10040.4.1': 'dsa',
  '1.3.101.112': 'ed25519',
  '1.3.101.113': 'ed448',
  '1.3.101.110': 'x25519',
  '1.3.101.111': 'x448',
};

/** Parses a DER certificate with pkijs, or raises certificate_invalid. */
export function parseCertificate(der: Buffer): pkijs.Certificate {
  const asn1 = parseAsn1(der, 'certificate_invalid', 'Certificate');
  try {
    return new pkijs.Certificate({ schema: asn1 });
  } catch (cause) {
    throw new SigningError('certificate_invalid', 'The data is not an X.509 certificate.', { cause });
  }
}

// Parsing costs ~0.1 ms per X509Certificate (an app with 21 Mach-O files built ~100 per signing)
// and ~1-5 ms per pkijs description: both are kept per DER (certificate-memo.ts).
const described = new CertificateMemo<CertificateInfo>(64, 16 * 1024);
const parsedX509 = new CertificateMemo<X509Certificate>(64, 16 * 1024);

/** node:crypto's view of a DER certificate (immutable, so one per certificate serves every caller); throws as its constructor does. */
export function x509Of(der: Buffer): X509Certificate {
  return parsedX509.get(der.toString('latin1'), () => new X509Certificate(der));
}

/** Facts about a DER certificate (a fresh copy each call: callers may keep or change it). */
export function describeCertificate(der: Buffer): CertificateInfo {
  const info = described.get(der.toString('latin1'), () => describeParsed(der));
  return { ...info, notBefore: new Date(info.notBefore), notAfter: new Date(info.notAfter), caIssuers: [...info.caIssuers] };
}

function describeParsed(der: Buffer): CertificateInfo {
  const cert = parseCertificate(der);
  const subjectCn = attribute(cert.subject, '2.5.4.3');
  const issuerCn = attribute(cert.issuer, '2.5.4.3');
  const algorithm = cert.subjectPublicKeyInfo.algorithm.algorithmId;
  const info: CertificateInfo = {
    subject: rfc4514(cert.subject),
    issuer: rfc4514(cert.issuer),
    serialNumber: serialHex(bufferOf(cert.serialNumber.valueBlock.valueHexView)),
    notBefore: cert.notBefore.value,
    notAfter: cert.notAfter.value,
    sha1: createHash('sha1').update(der).digest('hex').toUpperCase(),
    sha256: createHash('sha256').update(der).digest('hex').toUpperCase(),
    keyType: KEY_ALGORITHMS[algorithm] ?? 'unknown',
    isCA: false,
    selfIssued: bufferOf(cert.subject.valueBeforeDecode).equals(bufferOf(cert.issuer.valueBeforeDecode)),
    caIssuers: [],
  };
  if (subjectCn !== undefined) info.subjectCommonName = subjectCn;
  if (issuerCn !== undefined) info.issuerCommonName = issuerCn;
  // Apple team ids are 10 upper-case alphanumerics; WWDR intermediates carry OU=G3 etc. instead.
  const ou = attribute(cert.subject, '2.5.4.11');
  if (ou !== undefined && /^[A-Z0-9]{10}$/.test(ou)) info.teamId = ou;
  const o = attribute(cert.subject, '2.5.4.10');
  if (o !== undefined) info.organization = o;
  Object.assign(info, keyDetails(der));

  for (const extension of cert.extensions ?? []) {
    const parsed = extension.parsedValue as unknown;
    if (extension.extnID === '2.5.29.19' && parsed instanceof pkijs.BasicConstraints) info.isCA = parsed.cA;
    if (extension.extnID === OID.subjectKeyIdentifier && parsed instanceof asn1js.OctetString) info.subjectKeyId = bufferOf(parsed.valueBlock.valueHexView).toString('hex');
    if (extension.extnID === OID.authorityKeyIdentifier && parsed instanceof pkijs.AuthorityKeyIdentifier && parsed.keyIdentifier) {
      info.authorityKeyId = bufferOf(parsed.keyIdentifier.valueBlock.valueHexView).toString('hex');
    }
    if (extension.extnID === OID.authorityInfoAccess && parsed instanceof pkijs.InfoAccess) {
      for (const access of parsed.accessDescriptions) {
        // GeneralName type 6 = uniformResourceIdentifier
        if (access.accessMethod === OID.caIssuers && access.accessLocation.type === 6) info.caIssuers.push(String(access.accessLocation.value));
      }
    }
  }
  return info;
}

/**
 * The serial as Keychain and `openssl x509 -serial` print it: the DER INTEGER's content without the
 * 0x00 that X.690 §8.3.2 puts before a positive value whose first byte has its top bit set (about
 * half of all random serials, Apple's included), and still an even number of digits.
 */
function serialHex(content: Buffer): string {
  const positive = content.length > 1 && content[0] === 0 && ((content[1] ?? 0) & 0x80) !== 0 ? content.subarray(1) : content;
  return positive.toString('hex').toUpperCase();
}

/** True when `at` is past notAfter (or before notBefore). */
export function isExpired(certificate: Buffer | CertificateInfo, at: Date = new Date()): boolean {
  const info = Buffer.isBuffer(certificate) ? describeCertificate(certificate) : certificate;
  return at.getTime() > info.notAfter.getTime() || at.getTime() < info.notBefore.getTime();
}

function keyDetails(der: Buffer): Pick<CertificateInfo, 'keySize' | 'curve'> {
  try {
    const details = x509Of(der).publicKey.asymmetricKeyDetails ?? {};
    const curve = details.namedCurve;
    const curveBits: Record<string, number> = { prime256v1: 256, secp384r1: 384, secp521r1: 521, secp256k1: 256 };
    const out: Pick<CertificateInfo, 'keySize' | 'curve'> = {};
    if (details.modulusLength !== undefined) out.keySize = details.modulusLength;
    if (curve !== undefined) {
      out.curve = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }[curve] ?? curve;
      if (curveBits[curve] !== undefined) out.keySize = curveBits[curve];
    }
    return out;
  } catch {
    // OpenSSL 3.0 cannot decode some keys (Ed25519 in odd encodings); the rest of the facts stand.
    return {};
  }
}

function attribute(name: pkijs.RelativeDistinguishedNames, type: string): string | undefined {
  const found = name.typesAndValues.find((tv) => tv.type === type);
  return found === undefined ? undefined : attributeValue(found);
}

function attributeValue(tv: pkijs.AttributeTypeAndValue): string {
  const value = tv.value as unknown as { valueBlock?: { value?: unknown } };
  const text = value.valueBlock?.value;
  return typeof text === 'string' ? text : '';
}

/** RFC 4514 §2: RDNs in reverse order, "type=value", special characters escaped. */
export function rfc4514(name: pkijs.RelativeDistinguishedNames): string {
  // pkijs flattens multi-valued RDNs; walk the raw SET structure to keep "+" grouping.
  const raw = parseAsn1(bufferOf(name.valueBeforeDecode), 'certificate_invalid', 'Name');
  const rdns = raw instanceof asn1js.Sequence ? raw.valueBlock.value : [];
  const parts: string[] = [];
  for (const rdn of rdns) {
    const atvs = rdn instanceof asn1js.Set ? rdn.valueBlock.value : [];
    parts.push(
      atvs
        .map((atv) => {
          const tv = new pkijs.AttributeTypeAndValue({ schema: atv });
          const short = SHORT_NAMES[tv.type];
          if (short === undefined) return `${tv.type}=#${bufferOf(tv.value.valueBeforeDecodeView).toString('hex')}`;
          return `${short}=${escapeValue(attributeValue(tv))}`;
        })
        .join('+'),
    );
  }
  return parts.reverse().join(',');
}

function escapeValue(value: string): string {
  let out = value.replace(/[\\"+,;<>]/g, (c) => `\\${c}`).replace(/\0/g, '\\00');
  if (out.startsWith('#') || out.startsWith(' ')) out = `\\${out}`;
  if (out.endsWith(' ') && out.length > 1) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/** Raw TLVs of the issuer Name, serial INTEGER and subject Name of a DER certificate. */
export function certificateParts(certificate: Buffer): { issuer: Buffer; serial: Buffer; subject: Buffer } {
  try {
    const outer = readTlv(certificate);
    const tbs = readTlv(certificate, outer.headerLength);
    let offset = outer.headerLength + tbs.headerLength;
    const take = (): Buffer => {
      const element = readTlv(certificate, offset);
      const bytes = certificate.subarray(offset, element.end);
      offset = element.end;
      return bytes;
    };
    let first = take();
    if (first[0] === 0xa0) first = take(); // [0] EXPLICIT version, then serialNumber
    const serial = first;
    take(); // signature AlgorithmIdentifier
    const issuer = take();
    take(); // validity
    const subject = take();
    if (serial[0] !== 0x02 || issuer[0] !== 0x30 || subject[0] !== 0x30) throw new Error('unexpected TBSCertificate layout');
    return { issuer, serial, subject };
  } catch (cause) {
    throw new SigningError('certificate_invalid', 'The signing certificate is not a DER X.509 certificate.', { cause });
  }
}
