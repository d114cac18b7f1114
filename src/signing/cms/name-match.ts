// X.500 Name comparison (RFC 5280 §7.1): two distinguished names match when they have the same
// RDNs in the same order, each RDN holding the same attributes (in any order), and each
// attribute value matches - directory strings after LDAP string preparation (RFC 4518: Unicode
// normalisation, case folding, insignificant space handling), whatever their ASN.1 string type.
// Raw DER equality is not enough: signers such as apksig's golden original.apk name the issuer
// with a PrintableString where the certificate says UTF8String, and Java's X500Principal (which
// Android and apksig use) treats them as the same name. Hand-written over the DER reader of
// der-writer.ts: node:crypto has no name comparison, and pkijs's (RelativeDistinguishedNames
// isEqual) compares the attributes of an RDN in order and without Unicode normalisation.
import { readTlv } from './der-writer.ts';

const SEQUENCE = 0x30;
const SET = 0x31;
const OBJECT_IDENTIFIER = 0x06;
// RFC 5280 §4.1.2.4 DirectoryString choices, and IA5String (emailAddress, domainComponent).
const TELETEX = 0x14;
const PRINTABLE = 0x13;
const UNIVERSAL = 0x1c;
const UTF8 = 0x0c;
const BMP = 0x1e;
const IA5 = 0x16;

interface Attribute {
  readonly type: Buffer;
  readonly tag: number;
  /** The value's full encoding (for non-string values) and its content bytes. */
  readonly encoded: Buffer;
  readonly content: Buffer;
}

/** True when the DER Names `a` and `b` denote the same name; false also for malformed input. */
export function namesMatch(a: Buffer, b: Buffer): boolean {
  if (a.equals(b)) return true;
  const left = parseName(a);
  const right = parseName(b);
  if (left === null || right === null || left.length !== right.length) return false;
  return left.every((rdn, i) => rdnsMatch(rdn, right[i]!));
}

function rdnsMatch(a: readonly Attribute[], b: readonly Attribute[]): boolean {
  if (a.length !== b.length) return false;
  const unused = [...b];
  for (const attribute of a) {
    const index = unused.findIndex((other) => attributesMatch(attribute, other));
    if (index === -1) return false;
    unused.splice(index, 1);
  }
  return true;
}

function attributesMatch(a: Attribute, b: Attribute): boolean {
  if (!a.type.equals(b.type)) return false;
  const left = prepared(a);
  const right = prepared(b);
  // Not both strings: only an identical encoding matches (RFC 5280 §7.1, binary comparison).
  if (left === null || right === null) return a.encoded.equals(b.encoded);
  return left === right;
}

/** RFC 4518 preparation for caseIgnoreMatch: NFKC, case fold, insignificant spaces removed. */
function prepared(attribute: Attribute): string | null {
  const text = decodeString(attribute.tag, attribute.content);
  if (text === null) return null;
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

function decodeString(tag: number, content: Buffer): string | null {
  switch (tag) {
    case UTF8:
      return content.toString('utf8');
    case PRINTABLE:
    case IA5:
    case TELETEX:
      // PrintableString and IA5String are ASCII; T.61 is read as Latin-1, as OpenSSL and Java do.
      return content.toString('latin1');
    case BMP:
      return content.length % 2 === 0 ? Buffer.from(content).swap16().toString('utf16le') : null;
    case UNIVERSAL: {
      if (content.length % 4 !== 0) return null;
      const points: number[] = [];
      for (let i = 0; i < content.length; i += 4) points.push(content.readUInt32BE(i));
      try {
        return String.fromCodePoint(...points);
      } catch {
        return null;
      }
    }
    default:
      return null;
  }
}

/** Name ::= SEQUENCE OF RelativeDistinguishedName (SET OF AttributeTypeAndValue); null if malformed. */
function parseName(der: Buffer): Attribute[][] | null {
  try {
    const name = readTlv(der);
    if (name.tag !== SEQUENCE || name.end !== der.length) return null;
    const rdns: Attribute[][] = [];
    for (let offset = name.headerLength; offset < name.end; ) {
      const rdn = readTlv(der, offset);
      if (rdn.tag !== SET || rdn.end > name.end) return null;
      const attributes: Attribute[] = [];
      for (let inner = offset + rdn.headerLength; inner < rdn.end; ) {
        const pair = readTlv(der, inner);
        if (pair.tag !== SEQUENCE || pair.end > rdn.end) return null;
        const type = readTlv(der, inner + pair.headerLength);
        if (type.tag !== OBJECT_IDENTIFIER || type.end > pair.end) return null;
        const value = readTlv(der, type.end);
        if (value.end !== pair.end) return null;
        attributes.push({
          type: der.subarray(inner + pair.headerLength, type.end),
          tag: value.tag,
          encoded: der.subarray(type.end, value.end),
          content: der.subarray(type.end + value.headerLength, value.end),
        });
        inner = pair.end;
      }
      if (attributes.length === 0) return null;
      rdns.push(attributes);
      offset = rdn.end;
    }
    return rdns;
  } catch {
    return null;
  }
}
