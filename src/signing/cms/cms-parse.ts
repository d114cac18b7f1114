// CMS SignedData (RFC 5652 §5) reader: turns DER or BER (Apple writes indefinite lengths) into a
// plain structure that keeps the original bytes of everything a verifier hashes or compares —
// certificates, the signed attributes, the issuer name. Verification lives in cms-verify.ts.
import * as asn1js from 'asn1js';
import { SigningError } from '../errors.ts';
import { BerReader, CONTEXT, isContextTag, isUniversal, TAG, UNIVERSAL, type BerElement } from './ber-reader.ts';
import { OID, parseAsn1 } from './der.ts';

export interface ParsedAttribute {
  type: string;
  /** Original encoding of each AttributeValue. */
  values: Buffer[];
  /** The parsed values, for callers that want to look inside. */
  parsed: asn1js.AsnType[];
}

export type SignerIdentifier = { issuer: Buffer; serialNumber: Buffer } | { subjectKeyIdentifier: Buffer };

export interface ParsedSignerInfo {
  version: number;
  sid: SignerIdentifier;
  digestAlgorithm: string;
  /** The signed attributes as embedded ([0] IMPLICIT), or undefined when absent. */
  signedAttributesDer?: Buffer;
  signedAttributes?: ParsedAttribute[];
  signatureAlgorithm: string;
  signatureAlgorithmParameters?: Buffer;
  signature: Buffer;
}

export interface ParsedSignedData {
  version: number;
  digestAlgorithms: string[];
  contentType: string;
  /** Encapsulated content, when attached. */
  content?: Buffer;
  /** Every certificate, original DER, in stored order. */
  certificates: Buffer[];
  signerInfos: ParsedSignerInfo[];
}

const invalid = (message: string): SigningError => new SigningError('cms_invalid', message);

/**
 * Parses a ContentInfo holding SignedData. The structure is walked with ber-reader.ts (certificates
 * stay opaque DER); only the signed attributes' values are handed to asn1js, for callers that look
 * inside them.
 */
export function parseSignedData(der: Buffer): ParsedSignedData {
  const ber = new BerReader(der, 'cms_invalid', 'CMS ContentInfo');
  const children = (element: BerElement | undefined, what: string): BerElement[] => {
    if (element === undefined || !element.constructed) throw invalid(`CMS ${what} is not a constructed element.`);
    return ber.children(element);
  };
  const oidOf = (element: BerElement | undefined, what: string): string => {
    if (!isUniversal(element, TAG.oid)) throw invalid(`CMS ${what} is not an OBJECT IDENTIFIER.`);
    return ber.oid(element);
  };
  const intOf = (element: BerElement | undefined, what: string): number => {
    const value = isUniversal(element, TAG.integer) ? ber.smallInteger(element) : undefined;
    if (value === undefined) throw invalid(`CMS ${what} is not a small INTEGER.`);
    return value;
  };
  const octetsOf = (element: BerElement | undefined, what: string): Buffer => {
    if (!isUniversal(element, TAG.octetString)) throw invalid(`CMS ${what} is not an OCTET STRING.`);
    return ber.octets(element);
  };

  const root = ber.root();
  const [contentType, wrapped] = children(root, 'ContentInfo');
  if (oidOf(contentType, 'contentType') !== OID.signedData) throw invalid('The CMS ContentInfo does not hold SignedData.');
  if (!isContextTag(wrapped, 0) || !wrapped.constructed) throw invalid('CMS ContentInfo content is not [0] EXPLICIT.');
  const [signedData] = children(wrapped, 'ContentInfo content');
  const fields = children(signedData, 'SignedData');

  let i = 0;
  const version = intOf(fields[i++], 'SignedData version');
  const digestAlgorithms = children(fields[i++], 'digestAlgorithms').map((alg) => oidOf(children(alg, 'AlgorithmIdentifier')[0], 'digest algorithm'));
  const encap = children(fields[i++], 'encapContentInfo');
  const eContentType = oidOf(encap[0], 'eContentType');
  let content: Buffer | undefined;
  if (encap[1] !== undefined) {
    if (!isContextTag(encap[1], 0) || !encap[1].constructed) throw invalid('CMS eContent is not [0] EXPLICIT.');
    content = octetsOf(children(encap[1], 'eContent')[0], 'eContent');
  }
  const certificates: Buffer[] = [];
  if (isContextTag(fields[i], 0)) {
    for (const choice of children(fields[i++], 'certificates')) {
      // CertificateChoices: only plain X.509 certificates (a SEQUENCE) matter to us.
      if (isUniversal(choice, TAG.sequence) && choice.constructed) certificates.push(ber.raw(choice));
    }
  }
  if (isContextTag(fields[i], 1)) i++; // crls: not used
  const signerInfos = children(fields[i++], 'signerInfos').map((element) => parseSignerInfo(ber, element, { children, oidOf, intOf, octetsOf }));
  if (fields[i] !== undefined) throw invalid('Unexpected trailing fields in SignedData.');
  const parsed: ParsedSignedData = { version, digestAlgorithms, contentType: eContentType, certificates, signerInfos };
  if (content !== undefined) parsed.content = content;
  return parsed;
}

interface Readers {
  children(element: BerElement | undefined, what: string): BerElement[];
  oidOf(element: BerElement | undefined, what: string): string;
  intOf(element: BerElement | undefined, what: string): number;
  octetsOf(element: BerElement | undefined, what: string): Buffer;
}

function parseSignerInfo(ber: BerReader, element: BerElement, { children, oidOf, intOf, octetsOf }: Readers): ParsedSignerInfo {
  const fields = children(element, 'SignerInfo');
  let i = 0;
  const version = intOf(fields[i++], 'SignerInfo version');
  const sidElement = fields[i++];
  if (sidElement === undefined) throw invalid('SignerInfo has no SignerIdentifier.');
  let sid: SignerIdentifier;
  // RFC 5652 §5.3: sid is IssuerAndSerialNumber (a SEQUENCE) or [0] SubjectKeyIdentifier. Tested
  // on the tag itself (not the type guards, whose false branch would leave no type to test).
  if (sidElement.tagClass === UNIVERSAL && sidElement.tagNumber === TAG.sequence) {
    const [issuer, serial] = children(sidElement, 'IssuerAndSerialNumber');
    if (!isUniversal(issuer, TAG.sequence) || !issuer.constructed || !isUniversal(serial, TAG.integer) || serial.constructed) throw invalid('Malformed IssuerAndSerialNumber.');
    sid = { issuer: ber.raw(issuer), serialNumber: ber.content(serial) };
  } else if (sidElement.tagClass === CONTEXT && sidElement.tagNumber === 0 && !sidElement.constructed) {
    // [0] IMPLICIT SubjectKeyIdentifier (primitive OCTET STRING content)
    sid = { subjectKeyIdentifier: ber.content(sidElement) };
  } else {
    throw invalid('Unknown SignerIdentifier.');
  }
  const digestAlgorithm = oidOf(children(fields[i++], 'digestAlgorithm')[0], 'digestAlgorithm');
  const info: Partial<ParsedSignerInfo> = { version, sid, digestAlgorithm };
  if (isContextTag(fields[i], 0)) {
    const attrs = fields[i++]!;
    info.signedAttributesDer = ber.raw(attrs);
    info.signedAttributes = children(attrs, 'signedAttrs').map((attribute) => {
      const [type, values] = children(attribute, 'Attribute');
      const raws = children(values, 'Attribute values').map((value) => ber.raw(value));
      return { type: oidOf(type, 'attribute type'), values: raws, parsed: raws.map((value) => parseAsn1(value, 'cms_invalid', 'CMS attribute value')) };
    });
  }
  const signatureAlgorithm = children(fields[i++], 'signatureAlgorithm');
  info.signatureAlgorithm = oidOf(signatureAlgorithm[0], 'signatureAlgorithm');
  if (signatureAlgorithm[1] !== undefined) info.signatureAlgorithmParameters = ber.raw(signatureAlgorithm[1]);
  info.signature = octetsOf(fields[i++], 'signature');
  return info as ParsedSignerInfo;
}
