// The CertID that names a certificate in OCSP requests and responses (RFC 6960 §4.1.1): the hash
// of the issuer's Name, the hash of the issuer's public key and the certificate's serial number.
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { certificateParts, parseCertificate } from '../cms/certificate.ts';
import { OID, bufferOf, digestFromOid, toArrayBuffer, type DigestAlgorithm } from '../cms/der.ts';

export interface CertIdParts {
  hashAlgorithm: DigestAlgorithm;
  issuerNameHash: Buffer;
  issuerKeyHash: Buffer;
  /** The serial number INTEGER's content octets. */
  serial: Buffer;
}

/**
 * CertID of `certificate` issued by `issuer`. RFC 6960 §4.1.1: issuerNameHash is the hash of the
 * DER of the issuer's distinguished name, taken from the certificate's issuer field (so the
 * encoding is the one the CA signed); issuerKeyHash is the hash of the issuer's subjectPublicKey
 * BIT STRING value, without tag, length and unused-bits octet. SHA-1 is what responders are
 * required to understand (RFC 5019 §2.1.1 and every public CA's responder).
 */
export function certIdFor(certificate: Buffer, issuer: Buffer, hashAlgorithm: DigestAlgorithm = 'sha1'): CertIdParts {
  const { issuer: issuerName, serial } = certificateParts(certificate);
  const issuerCert = parseCertificate(issuer);
  const key = bufferOf(issuerCert.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView);
  return {
    hashAlgorithm,
    issuerNameHash: createHash(hashAlgorithm).update(issuerName).digest(),
    issuerKeyHash: createHash(hashAlgorithm).update(key).digest(),
    serial: integerContent(serial),
  };
}

/** The content octets of a DER INTEGER TLV (short or long form length). */
function integerContent(tlv: Buffer): Buffer {
  const first = tlv[1] ?? 0;
  const header = first & 0x80 ? 2 + (first & 0x7f) : 2;
  return tlv.subarray(header);
}

export function certIdToPkijs(id: CertIdParts): pkijs.CertID {
  return new pkijs.CertID({
    hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID[id.hashAlgorithm], algorithmParams: new asn1js.Null() }),
    issuerNameHash: new asn1js.OctetString({ valueHex: toArrayBuffer(id.issuerNameHash) }),
    issuerKeyHash: new asn1js.OctetString({ valueHex: toArrayBuffer(id.issuerKeyHash) }),
    serialNumber: new asn1js.Integer({ valueHex: toArrayBuffer(id.serial) }),
  });
}

/** The parts of a parsed CertID, or null when its hash algorithm is not one Signet knows. */
export function certIdFromPkijs(id: pkijs.CertID): CertIdParts | null {
  const hashAlgorithm = digestFromOid(id.hashAlgorithm.algorithmId);
  if (hashAlgorithm === undefined) return null;
  return {
    hashAlgorithm,
    issuerNameHash: bufferOf(id.issuerNameHash.valueBlock.valueHexView),
    issuerKeyHash: bufferOf(id.issuerKeyHash.valueBlock.valueHexView),
    serial: bufferOf(id.serialNumber.valueBlock.valueHexView),
  };
}

/** Same certificate: equal hashes and serial (serials compared as integers, leading zeros aside). */
export function sameCertId(a: CertIdParts, b: CertIdParts): boolean {
  const trim = (s: Buffer) => {
    let i = 0;
    while (i < s.length - 1 && s[i] === 0) i++;
    return s.subarray(i);
  };
  return a.hashAlgorithm === b.hashAlgorithm && a.issuerNameHash.equals(b.issuerNameHash) && a.issuerKeyHash.equals(b.issuerKeyHash) && trim(a.serial).equals(trim(b.serial));
}
