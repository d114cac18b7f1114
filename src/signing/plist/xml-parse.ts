// Strict XML plist reader. Hand-written rather than @xmldom/xmldom because xmldom accepts
// malformed XML silently (a bare "&", undeclared entities kept as text) and builds a DOM we would
// walk anyway; an entitlements blob that two parsers read differently is a signing hazard, so
// anything that is not well-formed XML (XML 1.0) carrying a well-formed plist (Apple's
// PropertyList-1.0.dtd) is refused with `plist_invalid`.
//
// Deliberate choices, each matching CoreFoundation's reader (CFPropertyList.c):
// - no line-ending normalisation: CF keeps "\r" inside <string> as read, and its writer does
//   not escape it, so normalising would break Apple round trips;
// - DOCTYPE is skipped, but an internal subset ("[...]") is refused: CF never expands entity
//   declarations, and refusing avoids entity-expansion attacks;
// - a root without <plist> (a bare <dict>) is accepted, as CF accepts it;
// - <integer> accepts decimal or 0x-hex, surrounding whitespace ignored; <real> accepts what
//   strtod does for finite numbers plus nan/inf/infinity; <date> must be YYYY-MM-DDTHH:MM:SSZ.
// One addition for safety: a dictionary with a repeated key is refused (CF silently keeps one).
import { SigningError } from '../errors.ts';
import { APPLE_EPOCH_MS, checkIntegerRange, plistDate, type PlistDict, type PlistValue } from './model.ts';

const MAX_DEPTH = 512;
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const NAME = /[A-Za-z_:][-A-Za-z0-9._:]*/y;
const SPACE = /[ \t\r\n]*/y;

export function parseXmlPlist(input: Uint8Array): PlistValue {
  return new XmlPlistReader(decode(input)).document();
}

function decode(input: Uint8Array): string {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  let text: string;
  try {
    if (bytes[0] === 0xfe && bytes[1] === 0xff) {
      const swapped = Buffer.from(bytes.subarray(2));
      if (swapped.length % 2 !== 0) throw new TypeError('odd UTF-16 length');
      swapped.swap16();
      text = new TextDecoder('utf-16le', { fatal: true }).decode(swapped);
    } else if (bytes[0] === 0xff && bytes[1] === 0xfe) {
      text = new TextDecoder('utf-16le', { fatal: true }).decode(bytes.subarray(2));
    } else {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    }
  } catch (cause) {
    throw new SigningError('plist_invalid', 'XML plist is not valid UTF-8/UTF-16 text', { cause });
  }
  const bad = NOT_XML_CHAR.exec(text);
  if (bad) throw new SigningError('plist_invalid', `XML plist contains a character XML forbids (U+${bad[0].codePointAt(0)!.toString(16).padStart(4, '0')})`);
  return text;
}

interface StartTag {
  name: string;
  empty: boolean; // self-closing: <x/>
}

class XmlPlistReader {
  private pos = 0;
  private readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  document(): PlistValue {
    if (this.text.startsWith('<?xml')) this.xmlDeclaration();
    this.misc(true);
    if (!this.text.startsWith('<', this.pos)) this.fail('expected the root element');
    const root = this.startTag();
    let value: PlistValue;
    if (root.name === 'plist') {
      if (root.empty) this.fail('<plist> holds no value');
      this.misc(false);
      value = this.value(this.startTag(), 1);
      this.misc(false);
      this.endTag('plist');
    } else {
      value = this.value(root, 1);
    }
    this.misc(false);
    if (this.pos !== this.text.length) this.fail('content after the root element');
    return value;
  }

  private value(tag: StartTag, depth: number): PlistValue {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
    switch (tag.name) {
      case 'dict':
        return this.dict(tag, depth);
      case 'array': {
        const items: PlistValue[] = [];
        if (!tag.empty) {
          for (;;) {
            this.misc(false);
            if (this.text.startsWith('</', this.pos)) break;
            items.push(this.value(this.startTag(), depth + 1));
          }
          this.endTag('array');
        }
        return { type: 'array', value: items };
      }
      case 'string':
        return { type: 'string', value: this.content(tag) };
      case 'integer':
        return { type: 'integer', value: this.integer(this.content(tag)) };
      case 'real':
        return { type: 'real', value: this.real(this.content(tag)) };
      case 'true':
      case 'false':
        if (this.content(tag) !== '') this.fail(`<${tag.name}> must be empty`);
        return { type: 'boolean', value: tag.name === 'true' };
      case 'date':
        return plistDate(this.date(this.content(tag)));
      case 'data':
        return { type: 'data', value: this.base64(this.content(tag)) };
      default:
        return this.fail(`unexpected element <${tag.name}>`);
    }
  }

  private dict(tag: StartTag, depth: number): PlistDict {
    const map = new Map<string, PlistValue>();
    if (tag.empty) return { type: 'dict', value: map };
    for (;;) {
      this.misc(false);
      if (this.text.startsWith('</', this.pos)) break;
      const keyTag = this.startTag();
      if (keyTag.name !== 'key') this.fail(`expected <key> in <dict>, found <${keyTag.name}>`);
      const key = this.content(keyTag);
      if (map.has(key)) this.fail(`duplicate dictionary key "${key}"`);
      this.misc(false);
      if (this.text.startsWith('</', this.pos)) this.fail(`key "${key}" has no value`);
      map.set(key, this.value(this.startTag(), depth + 1));
    }
    this.endTag('dict');
    return { type: 'dict', value: map };
  }

  private integer(raw: string): bigint {
    const text = raw.trim();
    const match = /^([+-]?)(?:0[xX]([0-9a-fA-F]+)|([0-9]+))$/.exec(text);
    if (!match) return this.fail(`<integer> "${raw}" is not an integer`);
    const magnitude = match[2] !== undefined ? BigInt(`0x${match[2]}`) : BigInt(match[3]!);
    const value = match[1] === '-' ? -magnitude : magnitude;
    try {
      checkIntegerRange(value);
    } catch (error) {
      return this.fail((error as Error).message);
    }
    return value;
  }

  private real(raw: string): number {
    const text = raw.trim();
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
    const special = /^([+-]?)(nan|inf|infinity)$/i.exec(text);
    if (special) {
      if (special[2]!.toLowerCase() === 'nan') return Number.NaN;
      return special[1] === '-' ? -Infinity : Infinity;
    }
    return this.fail(`<real> "${raw}" is not a number`);
  }

  private date(raw: string): number {
    const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/.exec(raw.trim());
    if (!match) return this.fail(`<date> "${raw}" is not YYYY-MM-DDTHH:MM:SSZ`);
    const [y, mo, d, h, mi, s] = match.slice(1).map(Number) as [number, number, number, number, number, number];
    const date = new Date(0);
    date.setUTCFullYear(y, mo - 1, d);
    date.setUTCHours(h, mi, s, 0);
    if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
      this.fail(`<date> "${raw}" is not a valid date`);
    }
    return (date.getTime() - APPLE_EPOCH_MS) / 1000;
  }

  private base64(raw: string): Uint8Array {
    const compact = raw.replace(/[ \t\r\n]/g, '');
    if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(compact)) {
      this.fail('<data> is not valid base64');
    }
    return Buffer.from(compact, 'base64');
  }

  // ---- XML lexical layer -------------------------------------------------------------------

  /** Text content of a leaf element up to its end tag: entities decoded, CDATA kept, comments skipped. */
  private content(tag: StartTag): string {
    if (tag.empty) return '';
    let out = '';
    for (;;) {
      const lt = this.text.indexOf('<', this.pos);
      if (lt < 0) this.fail(`unterminated <${tag.name}>`);
      out += this.decodeText(this.text.slice(this.pos, lt));
      this.pos = lt;
      if (this.text.startsWith('</', lt)) break;
      if (this.text.startsWith('<![CDATA[', lt)) {
        const end = this.text.indexOf(']]>', lt + 9);
        if (end < 0) this.fail('unterminated CDATA section');
        out += this.text.slice(lt + 9, end);
        this.pos = end + 3;
      } else if (this.text.startsWith('<!--', lt)) this.comment();
      else if (this.text.startsWith('<?', lt)) this.processingInstruction();
      else this.fail(`element inside <${tag.name}>`);
    }
    this.endTag(tag.name);
    return out;
  }

  private decodeText(raw: string): string {
    if (raw.includes(']]>')) this.fail('"]]>" in text');
    if (!raw.includes('&')) return raw;
    return raw.replace(/&([^;]*);?/g, (whole, body: string) => {
      if (!whole.endsWith(';')) this.fail('"&" not starting an entity reference');
      switch (body) {
        case 'lt': return '<';
        case 'gt': return '>';
        case 'amp': return '&';
        case 'quot': return '"';
        case 'apos': return "'";
      }
      const ref = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(body);
      if (!ref) return this.fail(`unknown entity "&${body};"`);
      const code = ref[1] !== undefined ? parseInt(ref[1], 16) : parseInt(ref[2]!, 10);
      const char = code <= 0x10ffff ? String.fromCodePoint(code) : '';
      if (char === '' || NOT_XML_CHAR.test(char)) this.fail(`character reference "&${body};" is not an XML character`);
      return char;
    });
  }

  /** Whitespace, comments and processing instructions; a DOCTYPE only in the prolog. */
  private misc(prolog: boolean): void {
    let doctypeSeen = false;
    for (;;) {
      SPACE.lastIndex = this.pos;
      SPACE.exec(this.text);
      this.pos = SPACE.lastIndex;
      if (this.text.startsWith('<!--', this.pos)) this.comment();
      else if (this.text.startsWith('<?', this.pos)) this.processingInstruction();
      else if (prolog && !doctypeSeen && this.text.startsWith('<!DOCTYPE', this.pos)) {
        this.doctype();
        doctypeSeen = true;
      } else if (!prolog && this.pos < this.text.length && this.text[this.pos] !== '<') {
        this.fail('unexpected text');
      } else return;
    }
  }

  private xmlDeclaration(): void {
    const end = this.text.indexOf('?>');
    if (end < 0) this.fail('unterminated XML declaration');
    const decl = this.text.slice(0, end);
    if (!/^<\?xml\s+version\s*=\s*(["'])1\.[0-9]+\1/.test(decl)) this.fail('malformed XML declaration');
    const encoding = /encoding\s*=\s*(["'])([^"']*)\1/.exec(decl)?.[2];
    if (encoding !== undefined && !/^utf-(8|16)$/i.test(encoding)) this.fail(`unsupported encoding "${encoding}"`);
    this.pos = end + 2;
  }

  private comment(): void {
    const end = this.text.indexOf('-->', this.pos + 4);
    if (end < 0) this.fail('unterminated comment');
    if (this.text.slice(this.pos + 4, end).includes('--')) this.fail('"--" inside a comment');
    this.pos = end + 3;
  }

  private processingInstruction(): void {
    const end = this.text.indexOf('?>', this.pos + 2);
    if (end < 0) this.fail('unterminated processing instruction');
    if (/^xml(\s|\?|$)/i.test(this.text.slice(this.pos + 2, end + 1))) this.fail('XML declaration not at the start');
    this.pos = end + 2;
  }

  private doctype(): void {
    let i = this.pos + 9;
    while (i < this.text.length) {
      const ch = this.text[i]!;
      if (ch === '"' || ch === "'") {
        const close = this.text.indexOf(ch, i + 1);
        if (close < 0) break;
        i = close + 1;
        continue;
      }
      if (ch === '[') this.fail('DOCTYPE internal subsets are not supported');
      if (ch === '>') {
        this.pos = i + 1;
        return;
      }
      i += 1;
    }
    this.fail('unterminated DOCTYPE');
  }

  private startTag(): StartTag {
    if (this.text[this.pos] !== '<') this.fail('expected an element');
    this.pos += 1;
    const name = this.name();
    const seen = new Set<string>();
    for (;;) {
      const before = this.pos;
      SPACE.lastIndex = this.pos;
      SPACE.exec(this.text);
      this.pos = SPACE.lastIndex;
      if (this.text.startsWith('/>', this.pos)) {
        this.pos += 2;
        return { name, empty: true };
      }
      if (this.text[this.pos] === '>') {
        this.pos += 1;
        return { name, empty: false };
      }
      if (this.pos === before) this.fail(`malformed start tag <${name}>`);
      const attr = this.name();
      if (seen.has(attr)) this.fail(`repeated attribute "${attr}"`);
      seen.add(attr);
      const eq = /[ \t\r\n]*=[ \t\r\n]*(["'])/y;
      eq.lastIndex = this.pos;
      const quote = eq.exec(this.text)?.[1];
      if (quote === undefined) this.fail(`attribute "${attr}" has no quoted value`);
      this.pos = eq.lastIndex;
      const close = this.text.indexOf(quote!, this.pos);
      if (close < 0) this.fail('unterminated attribute value');
      const raw = this.text.slice(this.pos, close);
      if (raw.includes('<')) this.fail('"<" in an attribute value');
      this.decodeText(raw);
      this.pos = close + 1;
    }
  }

  private endTag(name: string): void {
    const re = /<\/([A-Za-z_:][-A-Za-z0-9._:]*)[ \t\r\n]*>/y;
    re.lastIndex = this.pos;
    const match = re.exec(this.text);
    if (!match) this.fail(`expected </${name}>`);
    if (match![1] !== name) this.fail(`</${match![1]}> does not close <${name}>`);
    this.pos = re.lastIndex;
  }

  private name(): string {
    NAME.lastIndex = this.pos;
    const match = NAME.exec(this.text);
    if (!match) this.fail('expected a name');
    this.pos = NAME.lastIndex;
    return match![0];
  }

  private fail(message: string): never {
    const before = this.text.slice(0, this.pos);
    const line = before.split('\n').length;
    const column = this.pos - before.lastIndexOf('\n');
    throw new SigningError('plist_invalid', `XML plist: ${message} (line ${line}, column ${column})`, {
      details: { line, column },
    });
  }
}
