// Parsing and checking an OCSP response (RFC 6960 §4.2) for the certificate a request asked
// about: the response must be `successful`, of the basic type, signed by the certificate's issuer
// or by a responder the issuer delegated (§4.2.2.2), fresh (§3.2 items 4-5), and echo the
// request's nonce when it echoes one (§4.4.1). Anything else is an error, never a status: a
// response Signet cannot trust says nothing about revocation.
import { X509Certificate, verify as verifySignature } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { isIssuedBy } from '../cms/chain.ts';
import { OID, bufferOf, encodeDer, parseAsn1 } from '../cms/der.ts';
import { SigningError } from '../errors.ts';
import { certIdFromPkijs, sameCertId, type CertIdParts } from './cert-id.ts';
import { OCSP_OID } from './ocsp-request.ts';

export type OcspCertStatus = 'good' | 'revoked' | 'unknown';

export interface OcspAnswer {
  status: OcspCertStatus;
  /** When the responder last knew the status to be correct (§4.2.2.1). */
  thisUpdate: Date;
  /** When newer information will be available; null: the responder always has newer (§4.2.2.1). */
  nextUpdate: Date | null;
  producedAt: Date;
  revokedAt: Date | null;
  /** CRLReason name (RFC 5280 §5.3.1) when the responder gives one. */
  revocationReason: string | null;
}

/** OCSPResponseStatus values (§4.2.1); 4 is not used. */
const RESPONSE_STATUS: Record<number, string> = { 0: 'successful', 1: 'malformedRequest', 2: 'internalError', 3: 'tryLater', 5: 'sigRequired', 6: 'unauthorized' };
const CRL_REASONS = ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'certificateHold', '', 'removeFromCRL', 'privilegeWithdrawn', 'aACompromise'];

/** Signature algorithms a responder may use, as node:crypto digest names (null: the key decides). */
const SIGNATURE_DIGESTS: Record<string, string> = {
  [OID.sha1WithRsa]: 'sha1',
  [OID.sha256WithRsa]: 'sha256',
  [OID.sha384WithRsa]: 'sha384',
  [OID.sha512WithRsa]: 'sha512',
  [OID.ecdsaWithSha1]: 'sha1',
  [OID.ecdsaWithSha256]: 'sha256',
  [OID.ecdsaWithSha384]: 'sha384',
  [OID.ecdsaWithSha512]: 'sha512',
};

/** Clock difference tolerated between Signet and the responder when judging freshness. */
const CLOCK_SKEW_MS = 5 * 60_000;

function invalid(message: string, cause?: unknown): SigningError {
  return new SigningError('ocsp_response_invalid', `OCSP response: ${message}`, cause === undefined ? undefined : { cause });
}

export interface ReadOcspOptions {
  certId: CertIdParts;
  /** The issuer of the certificate asked about, DER. */
  issuer: Buffer;
  /** The nonce the request carried. */
  nonce?: Buffer;
  now?: Date;
}

/** Parses `der` (an `application/ocsp-response` body) and returns the checked answer for `certId`. */
export function readOcspResponse(der: Buffer, options: ReadOcspOptions): OcspAnswer {
  const now = options.now ?? new Date();
  let response: pkijs.OCSPResponse;
  try {
    response = new pkijs.OCSPResponse({ schema: parseAsn1(der, 'ocsp_response_invalid', 'OCSP response') });
  } catch (error) {
    if (error instanceof SigningError) throw error;
    throw invalid('not an OCSPResponse', error);
  }
  const status = response.responseStatus.valueBlock.valueDec;
  if (status !== 0) throw invalid(`the responder answered ${RESPONSE_STATUS[status] ?? `status ${status}`}`);
  if (!response.responseBytes || response.responseBytes.responseType !== OCSP_OID.basicResponse) throw invalid('not a basic OCSP response (§4.2.1)');
  let basic: pkijs.BasicOCSPResponse;
  try {
    basic = new pkijs.BasicOCSPResponse({ schema: parseAsn1(bufferOf(response.responseBytes.response.valueBlock.valueHexView), 'ocsp_response_invalid', 'BasicOCSPResponse') });
  } catch (error) {
    if (error instanceof SigningError) throw error;
    throw invalid('malformed BasicOCSPResponse', error);
  }
  checkSignature(basic, options.issuer, now);

  const data = basic.tbsResponseData;
  if (options.nonce !== undefined) {
    const echoed = data.responseExtensions?.find((e) => e.extnID === OCSP_OID.nonce);
    if (echoed !== undefined && !nonceValue(echoed).equals(options.nonce)) throw invalid('the nonce differs from the request\'s (a replayed answer?)');
  }
  const single = data.responses.find((r) => {
    const id = certIdFromPkijs(r.certID);
    return id !== null && sameCertId(id, options.certId);
  });
  if (single === undefined) throw invalid('no answer for the certificate asked about');
  // §3.2 item 4: thisUpdate sufficiently recent (not in the future); item 5: nextUpdate, when set, later than now.
  if (single.thisUpdate.getTime() > now.getTime() + CLOCK_SKEW_MS) throw invalid(`thisUpdate ${single.thisUpdate.toISOString()} is in the future`);
  if (single.nextUpdate !== undefined && single.nextUpdate.getTime() < now.getTime() - CLOCK_SKEW_MS) throw invalid(`stale: nextUpdate ${single.nextUpdate.toISOString()} has passed`);

  // CertStatus ::= CHOICE { good [0] IMPLICIT NULL, revoked [1] IMPLICIT RevokedInfo, unknown [2] IMPLICIT UnknownInfo }
  const choice = single.certStatus as asn1js.BaseBlock;
  const tag = choice.idBlock.tagNumber;
  const answer: OcspAnswer = { status: 'unknown', thisUpdate: single.thisUpdate, nextUpdate: single.nextUpdate ?? null, producedAt: data.producedAt, revokedAt: null, revocationReason: null };
  if (choice.idBlock.tagClass !== 3 || tag > 2) throw invalid('unrecognised certStatus');
  if (tag === 0) answer.status = 'good';
  if (tag === 1) {
    answer.status = 'revoked';
    const revoked = revokedInfo(choice);
    answer.revokedAt = revoked.time;
    answer.revocationReason = revoked.reason;
  }
  return answer;
}

function nonceValue(extension: pkijs.Extension): Buffer {
  const raw = bufferOf(extension.extnValue.valueBlock.valueHexView);
  // Conforming responders wrap the nonce in an OCTET STRING (§4.4.1); some echo it bare.
  try {
    const inner = parseAsn1(raw, 'ocsp_response_invalid', 'nonce');
    if (inner instanceof asn1js.OctetString) return bufferOf(inner.valueBlock.valueHexView);
  } catch {
    // bare nonce
  }
  return raw;
}

/** RevokedInfo ::= SEQUENCE { revocationTime GeneralizedTime, revocationReason [0] EXPLICIT CRLReason OPTIONAL } */
function revokedInfo(choice: asn1js.BaseBlock): { time: Date; reason: string | null } {
  const content = (choice as asn1js.Constructed).valueBlock.value ?? [];
  const time = content[0];
  if (!(time instanceof asn1js.GeneralizedTime)) throw invalid('RevokedInfo without a revocationTime');
  let reason: string | null = null;
  const tagged = content[1] as asn1js.Constructed | undefined;
  const enumerated = tagged?.valueBlock.value?.[0];
  if (enumerated instanceof asn1js.Enumerated) reason = CRL_REASONS[enumerated.valueBlock.valueDec] || `reason ${enumerated.valueBlock.valueDec}`;
  return { time: time.toDate(), reason };
}

/**
 * §4.2.2.2: the response is signed by the CA that issued the certificate, or by a responder
 * certificate that CA issued directly with id-kp-OCSPSigning in its extended key usage.
 */
function checkSignature(basic: pkijs.BasicOCSPResponse, issuer: Buffer, now: Date): void {
  const digest = SIGNATURE_DIGESTS[basic.signatureAlgorithm.algorithmId];
  if (digest === undefined) throw invalid(`unsupported signature algorithm ${basic.signatureAlgorithm.algorithmId}`);
  const tbs = bufferOf(basic.tbsResponseData.tbsView);
  const signature = bufferOf(basic.signature.valueBlock.valueHexView);
  const verifiesWith = (der: Buffer): boolean => {
    try {
      return verifySignature(digest, tbs, new X509Certificate(der).publicKey, signature);
    } catch {
      return false;
    }
  };
  if (verifiesWith(issuer)) return;
  for (const certificate of basic.certs ?? []) {
    const der = encodeDer(certificate.toSchema());
    if (!verifiesWith(der)) continue;
    if (!isIssuedBy(der, issuer) && !issuedDirectly(der, issuer)) throw invalid('signed by a responder the issuing CA did not certify');
    const x509 = new X509Certificate(der);
    if (!hasOcspSigning(certificate)) throw invalid('the responder certificate lacks id-kp-OCSPSigning (§4.2.2.2)');
    if (Date.parse(x509.validTo) < now.getTime() || Date.parse(x509.validFrom) > now.getTime()) throw invalid('the responder certificate is outside its validity period');
    return;
  }
  throw invalid('the signature does not verify with the issuer or a delegated responder');
}

/** Issued by `issuer` (signature and names) even when the responder certificate lacks CA-side key usage checks. */
function issuedDirectly(der: Buffer, issuer: Buffer): boolean {
  try {
    const child = new X509Certificate(der);
    const parent = new X509Certificate(issuer);
    return child.issuer === parent.subject && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

function hasOcspSigning(certificate: pkijs.Certificate): boolean {
  const eku = certificate.extensions?.find((e) => e.extnID === '2.5.29.37')?.parsedValue as unknown;
  return eku instanceof pkijs.ExtKeyUsage && eku.keyPurposes.includes(OCSP_OID.ocspSigning);
}
