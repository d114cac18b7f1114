// Building an OCSP request (RFC 6960 §4.1) for one certificate, and finding where to send it
// (the responder URL in the certificate's Authority Information Access, RFC 5280 §4.2.2.1).
import { randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { parseCertificate } from '../cms/certificate.ts';
import { encodeDer, toArrayBuffer } from '../cms/der.ts';
import { certIdFor, certIdToPkijs, type CertIdParts } from './cert-id.ts';

/** id-ad-ocsp (RFC 5280 §4.2.2.1) and id-pkix-ocsp-nonce (RFC 6960 §4.4.1). */
export const OCSP_OID = {
  accessMethod: '1.3.6.1.5.5.7.48.1',
  nonce: '1.3.6.1.5.5.7.48.1.2',
  basicResponse: '1.3.6.1.5.5.7.48.1.1',
  ocspSigning: '1.3.6.1.5.5.7.3.9',
  noCheck: '1.3.6.1.5.5.7.48.1.5',
} as const;

/** The http(s) OCSP responder URLs named in the certificate's AIA extension, in order. */
export function ocspResponderUrls(certificate: Buffer): string[] {
  const cert = parseCertificate(certificate);
  const urls: string[] = [];
  for (const extension of cert.extensions ?? []) {
    const parsed = extension.parsedValue as unknown;
    if (extension.extnID !== '1.3.6.1.5.5.7.1.1' || !(parsed instanceof pkijs.InfoAccess)) continue;
    for (const access of parsed.accessDescriptions) {
      // GeneralName [6] uniformResourceIdentifier; other location types cannot be dialled.
      if (access.accessMethod === OCSP_OID.accessMethod && access.accessLocation.type === 6) {
        const url = String(access.accessLocation.value);
        if (/^https?:\/\//i.test(url)) urls.push(url);
      }
    }
  }
  return urls;
}

export interface BuiltOcspRequest {
  /** DER of the OCSPRequest, the body of an `application/ocsp-request` POST (RFC 6960 §A.1). */
  der: Buffer;
  certId: CertIdParts;
  /** The nonce sent (RFC 6960 §4.4.1); a response that echoes one must echo this one. */
  nonce: Buffer;
}

/** An unsigned request (optionalSignature absent, §4.1.2) for the status of `certificate`. */
export function buildOcspRequest(certificate: Buffer, issuer: Buffer, nonce: Buffer = randomBytes(16)): BuiltOcspRequest {
  const certId = certIdFor(certificate, issuer);
  const request = new pkijs.OCSPRequest();
  request.tbsRequest.requestList = [new pkijs.Request({ reqCert: certIdToPkijs(certId) })];
  // The nonce extension's value is an OCTET STRING holding the nonce OCTET STRING (§4.4.1).
  const nonceValue = new asn1js.OctetString({ valueHex: toArrayBuffer(nonce) });
  request.tbsRequest.requestExtensions = [new pkijs.Extension({ extnID: OCSP_OID.nonce, critical: false, extnValue: nonceValue.toBER(false) })];
  return { der: encodeDer(request.toSchema(true)), certId, nonce };
}
