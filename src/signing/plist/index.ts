// Public API of the typed property-list model (see SPECIFICATION.md in this folder).
//   parsePlist(bytes)            → { value, format }   binary or XML, detected from the bytes
//   writePlist(value, format)    → bytes                 e.g. an edited Info.plist in its original format
//   writeXmlPlist / parseXmlPlist, writeBinaryPlist / parseBinaryPlist
//   encodeEntitlementsDer / decodeEntitlementsDer       code-signature slot 7
import { SigningError } from '../errors.ts';
import { isBinaryPlist, parseBinaryPlist, type BinaryParseOptions } from './binary-parse.ts';
import { writeBinaryPlist, type BinaryWriteOptions } from './binary-write.ts';
import type { PlistValue } from './model.ts';
import { parseXmlPlist } from './xml-parse.ts';
import { writeXmlPlist, type XmlWriteOptions } from './xml-write.ts';

export * from './model.ts';
export { plistFromJs, plistToJs, type PlainPlist } from './js-convert.ts';
export { parseXmlPlist } from './xml-parse.ts';
export { writeXmlPlist, XML_HEADER, type XmlWriteOptions } from './xml-write.ts';
export { formatReal, formatDate } from './xml-format.ts';
export { isBinaryPlist, parseBinaryPlist, type BinaryParseOptions } from './binary-parse.ts';
export { writeBinaryPlist, type BinaryWriteOptions } from './binary-write.ts';
export { encodeEntitlementsDer, encodeDerInteger } from './der-encode.ts';
export { decodeEntitlementsDer } from './der-decode.ts';

export type PlistFormat = 'xml' | 'binary';

/**
 * Largest plist accepted. Real Info.plists, entitlements and profiles are kilobytes; the cap keeps
 * a hostile package from making the readers hold (and an XML reader decode) hundreds of megabytes.
 */
export const MAX_PLIST_BYTES = 16 * 1024 * 1024;

export interface ParsedPlist {
  value: PlistValue;
  /** The format read, so an edited file can be written back the same way. */
  format: PlistFormat;
}

/** Reads a binary ("bplist00") or XML plist; anything else fails with `plist_invalid`. */
export function parsePlist(bytes: Uint8Array, options: BinaryParseOptions = {}): ParsedPlist {
  if (bytes.length > MAX_PLIST_BYTES) throw new SigningError('plist_invalid', `plist of ${bytes.length} bytes exceeds the ${MAX_PLIST_BYTES}-byte limit`);
  if (isBinaryPlist(bytes)) return { value: parseBinaryPlist(bytes, options), format: 'binary' };
  if (bytes.length >= 6 && Buffer.from(bytes.buffer, bytes.byteOffset, 6).toString('latin1').startsWith('bplist')) {
    throw new SigningError('plist_invalid', 'binary plist version other than "bplist00"');
  }
  return { value: parseXmlPlist(bytes), format: 'xml' };
}

export function writePlist(value: PlistValue, format: PlistFormat, options: XmlWriteOptions & BinaryWriteOptions = {}): Buffer {
  return format === 'binary' ? writeBinaryPlist(value, options) : writeXmlPlist(value, options);
}
