// XML plist writer reproducing CoreFoundation's output byte for byte (CFPropertyList.c
// `_CFGenerateXMLPropertyListToData` / `_CFAppendXML0`): the XML declaration and Apple DOCTYPE,
// one element per line, tab indentation, `<true/>`/`<false/>`, `<dict/>`/`<array/>` when empty,
// keys sorted by CFStringCompare (UTF-16 code units), base64 data on its own indented lines, and a
// final "\n". The entitlements blob (code-signature slot 5) and CodeResources (slot 3) are these
// bytes, so the format is part of the signature (ios-signing.md §8.1, §10).
import { SigningError } from '../errors.ts';
import type { PlistValue } from './model.ts';
import { base64Lines, escapeXmlText, formatDate, formatReal } from './xml-format.ts';

export const XML_HEADER =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n' +
  '<plist version="1.0">\n';

export interface XmlWriteOptions {
  /**
   * true (default): keys sorted as CoreFoundation writes them. false: the model's key order,
   * for callers that must reproduce a non-Apple file.
   */
  sortKeys?: boolean;
}

/** Serialises `value` as an Apple XML plist (UTF-8). */
export function writeXmlPlist(value: PlistValue, options: XmlWriteOptions = {}): Buffer {
  const parts: string[] = [XML_HEADER];
  appendValue(value, 0, options.sortKeys ?? true, parts, 0);
  parts.push('</plist>\n');
  return Buffer.from(parts.join(''), 'utf8');
}

const MAX_DEPTH = 512;

function appendValue(value: PlistValue, indent: number, sortKeys: boolean, out: string[], depth: number): void {
  if (depth > MAX_DEPTH) throw new SigningError('plist_invalid', `plist nests deeper than ${MAX_DEPTH} levels`);
  const tabs = '\t'.repeat(indent);
  switch (value.type) {
    case 'string':
      out.push(`${tabs}<string>${escapeXmlText(checkedText(value.value))}</string>\n`);
      return;
    case 'integer':
      out.push(`${tabs}<integer>${value.value}</integer>\n`);
      return;
    case 'real':
      out.push(`${tabs}<real>${formatReal(value.value)}</real>\n`);
      return;
    case 'boolean':
      out.push(`${tabs}${value.value ? '<true/>' : '<false/>'}\n`);
      return;
    case 'date':
      out.push(`${tabs}<date>${formatDate(value.value)}</date>\n`);
      return;
    case 'data':
      out.push(`${tabs}<data>\n${base64Lines(value.value, indent)}${tabs}</data>\n`);
      return;
    case 'uid':
      // CFPropertyList.c: a keyed-archiver UID is written as the dictionary {CF$UID: n}.
      out.push(`${tabs}<dict>\n${tabs}\t<key>CF$UID</key>\n${tabs}\t<integer>${value.value}</integer>\n${tabs}</dict>\n`);
      return;
    case 'array':
      if (value.value.length === 0) {
        out.push(`${tabs}<array/>\n`);
        return;
      }
      out.push(`${tabs}<array>\n`);
      for (const item of value.value) appendValue(item, indent + 1, sortKeys, out, depth + 1);
      out.push(`${tabs}</array>\n`);
      return;
    case 'dict': {
      if (value.value.size === 0) {
        out.push(`${tabs}<dict/>\n`);
        return;
      }
      out.push(`${tabs}<dict>\n`);
      const keys = [...value.value.keys()];
      // CFStringCompare without options compares UTF-16 code units, as JS `<` does.
      if (sortKeys) keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (const key of keys) {
        out.push(`${tabs}\t<key>${escapeXmlText(checkedText(key))}</key>\n`);
        appendValue(value.value.get(key)!, indent + 1, sortKeys, out, depth + 1);
      }
      out.push(`${tabs}</dict>\n`);
      return;
    }
  }
}

// XML 1.0 §2.2 Char: text outside it (NUL, most C0 controls, lone surrogates, U+FFFE/FFFF) cannot
// be read back by any XML parser, so writing it would produce an unreadable entitlements blob.
// isWellFormed() finds lone surrogates natively; the regex (no /u, so it stays fast) the rest.
const NOT_XML_CHAR_BMP = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

function checkedText(text: string): string {
  if (NOT_XML_CHAR_BMP.test(text) || !text.isWellFormed()) {
    throw new SigningError('plist_invalid', 'plist string holds a character XML cannot represent (control character or lone surrogate)');
  }
  return text;
}
