// CMS SignedData (RFC 5652 §5) reader: turns DER or BER (Apple writes indefinite lengths) into a
// plain structure that keeps the original bytes of everything a verifier hashes or compares —
// certificates, the signed attributes, the issuer name. Verification lives in cms-verify.ts.
import * as asn1js from 'asn1js';
import { SigningError } from '../errors.ts';
import { OID, bufferOf, parseAsn1 } from './der.ts';

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

const isContext = (element: asn1js.AsnType | undefined, tag: number): element is asn1js.Constructed =>
  element !== undefined && element.idBlock.tagClass === 3 && element.idBlock.tagNumber === tag;

function children(element: asn1js.AsnType | undefined, what: string): asn1js.AsnType[] {
  if (!(element instanceof asn1js.Constructed) && !(element instanceof asn1js.Sequence) && !(element instanceof asn1js.Set)) {
    throw invalid(`CMS ${what} is not a constructed element.`);
  }
  return (element as asn1js.Constructed).valueBlock.value;
}

function oidOf(element: asn1js.AsnType | undefined, what: string): string {
  if (!(element instanceof asn1js.ObjectIdentifier)) throw invalid(`CMS ${what} is not an OBJECT IDENTIFIER.`);
  return element.valueBlock.toString();
}

function intOf(element: asn1js.AsnType | undefined, what: string): number {
  if (!(element instanceof asn1js.Integer) || element.valueBlock.valueHexView.length > 4) throw invalid(`CMS ${what} is not a small INTEGER.`);
  return element.valueBlock.valueDec;
}

function octetsOf(element: asn1js.AsnType | undefined, what: string): Buffer {
  if (!(element instanceof asn1js.OctetString)) throw invalid(`CMS ${what} is not an OCTET STRING.`);
  return bufferOf(element.getValue());
}

const raw = (element: asn1js.AsnType): Buffer => Buffer.from(element.valueBeforeDecodeView);

/** Parses a ContentInfo holding SignedData. */
export function parseSignedData(der: Buffer): ParsedSignedData {
  const root = parseAsn1(der, 'cms_invalid', 'CMS ContentInfo');
  const [contentType, wrapped] = children(root, 'ContentInfo');
  if (oidOf(contentType, 'contentType') !== OID.signedData) throw invalid('The CMS ContentInfo does not hold SignedData.');
  if (!isContext(wrapped, 0)) throw invalid('CMS ContentInfo content is not [0] EXPLICIT.');
  const [signedData] = children(wrapped, 'ContentInfo content');
  const fields = children(signedData, 'SignedData');

  let i = 0;
  const version = intOf(fields[i++], 'SignedData version');
  const digestAlgorithms = children(fields[i++], 'digestAlgorithms').map((alg) => oidOf(children(alg, 'AlgorithmIdentifier')[0], 'digest algorithm'));
  const encap = children(fields[i++], 'encapContentInfo');
  const eContentType = oidOf(encap[0], 'eContentType');
  let content: Buffer | undefined;
  if (encap[1] !== undefined) {
    if (!isContext(encap[1], 0)) throw invalid('CMS eContent is not [0] EXPLICIT.');
    content = octetsOf(children(encap[1], 'eContent')[0], 'eContent');
  }
  const certificates: Buffer[] = [];
  if (isContext(fields[i], 0)) {
    for (const choice of children(fields[i++], 'certificates')) {
      // CertificateChoices: only plain X.509 certificates (a SEQUENCE) matter to us.
      if (choice instanceof asn1js.Sequence) certificates.push(raw(choice));
    }
  }
  if (isContext(fields[i], 1)) i++; // crls: not used
  const signerInfos = children(fields[i++], 'signerInfos').map(parseSignerInfo);
  if (fields[i] !== undefined) throw invalid('Unexpected trailing fields in SignedData.');
  const parsed: ParsedSignedData = { version, digestAlgorithms, contentType: eContentType, certificates, signerInfos };
  if (content !== undefined) parsed.content = content;
  return parsed;
}

function parseSignerInfo(element: asn1js.AsnType): ParsedSignerInfo {
  const fields = children(element, 'SignerInfo');
  let i = 0;
  const version = intOf(fields[i++], 'SignerInfo version');
  const sidElement = fields[i++];
  let sid: SignerIdentifier;
  if (sidElement instanceof asn1js.Sequence) {
    const [issuer, serial] = sidElement.valueBlock.value;
    if (!(issuer instanceof asn1js.Sequence) || !(serial instanceof asn1js.Integer)) throw invalid('Malformed IssuerAndSerialNumber.');
    sid = { issuer: raw(issuer), serialNumber: bufferOf(serial.valueBlock.valueHexView) };
  } else if (sidElement !== undefined && sidElement.idBlock.tagClass === 3 && sidElement.idBlock.tagNumber === 0) {
    // [0] IMPLICIT SubjectKeyIdentifier (primitive OCTET STRING content)
    sid = { subjectKeyIdentifier: bufferOf((sidElement as asn1js.Primitive).valueBlock.valueHexView) };
  } else {
    throw invalid('Unknown SignerIdentifier.');
  }
  const digestAlgorithm = oidOf(children(fields[i++], 'digestAlgorithm')[0], 'digestAlgorithm');
  const info: Partial<ParsedSignerInfo> = { version, sid, digestAlgorithm };
  if (isContext(fields[i], 0)) {
    const attrs = fields[i++] as asn1js.Constructed;
    info.signedAttributesDer = raw(attrs);
    info.signedAttributes = attrs.valueBlock.value.map(parseAttribute);
  }
  const signatureAlgorithm = children(fields[i++], 'signatureAlgorithm');
  info.signatureAlgorithm = oidOf(signatureAlgorithm[0], 'signatureAlgorithm');
  if (signatureAlgorithm[1] !== undefined) info.signatureAlgorithmParameters = raw(signatureAlgorithm[1]);
  info.signature = octetsOf(fields[i++], 'signature');
  return info as ParsedSignerInfo;
}

function parseAttribute(element: asn1js.AsnType): ParsedAttribute {
  const [type, values] = children(element, 'Attribute');
  const parsed = children(values, 'Attribute values');
  return { type: oidOf(type, 'attribute type'), values: parsed.map(raw), parsed };
}
