// Entry names: decoding (UTF-8 vs CP437), the safety rules, and the key used to find duplicates.
import { SigningError } from '../errors.ts';

// APPNOTE Appendix D: names without flag bit 11 are IBM code page 437. Bytes 0x80..0xFF:
const CP437_HIGH =
  'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes a name. APPNOTE 4.4.4 bit 11 means UTF-8; a flagged name that is not valid UTF-8 is
 * malformed. Without the flag, APPNOTE says CP437, but Java's ZipFile (and so apksig), Info-ZIP
 * on Unix and Apple's ditto all write UTF-8 without the flag; so an unflagged name that is valid
 * UTF-8 is read as UTF-8, and only other byte strings fall back to CP437.
 */
export function decodeName(bytes: Buffer, utf8Flag: boolean): string {
  // An indexed loop: `for…of` over a Buffer allocates an iterator result per byte where V8 does
  // not optimise it away (bin/signet stops at Maglev), ~5 MB per reading of bench:apk's names.
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return bytes.toString('latin1');
  try {
    return utf8.decode(bytes);
  } catch (cause) {
    if (utf8Flag) throw new SigningError('zip_invalid', 'an entry name flagged UTF-8 (APPNOTE 4.4.4 bit 11) is not valid UTF-8', { cause });
  }
  let text = '';
  for (const byte of bytes) text += byte < 0x80 ? String.fromCharCode(byte) : CP437_HIGH[byte - 0x80]!;
  return text;
}

/**
 * Refuses names that could escape an extraction folder or confuse tools: empty, NUL or other
 * control characters (apksig's v1 verifier rejects CR/LF/NUL), absolute paths (leading "/" or
 * "\", a drive letter), and any ".." segment. APPNOTE 4.4.17.1 says separators are "/", but
 * Windows extractors also split on "\", so both are treated as separators here.
 */
export function checkSafeName(name: string): void {
  const fail = (why: string): never => {
    throw new SigningError('zip_unsafe_entry', `unsafe entry name ${JSON.stringify(name)}: ${why}`, { details: { name } });
  };
  if (name.length === 0) fail('empty');
  if (/[\u0000-\u001f\u007f]/.test(name)) fail('control character');
  if (name.startsWith('/') || name.startsWith('\\')) fail('absolute path');
  if (/^[A-Za-z]:/.test(name)) fail('drive letter');
  // Split only a name that could hold a ".." segment (checked for every entry of every archive).
  if (name.includes('..')) for (const segment of name.split(/[\\/]/)) if (segment === '..') fail('".." segment');
}

// Printable ASCII, neither starting nor ending with "/", with no "//", and no "." segment.
const CANONICAL_ASCII = /^(?!\.?(?:\/|$))(?:[\x20-\x7e](?!\/\.?(?:\/|$)))*[\x20-\x7e]$/;

/**
 * The identity used for duplicate detection: Unicode NFC (macOS file systems fold NFD and NFC to
 * one file), "." and empty segments dropped, the trailing "/" of a directory dropped, so that
 * "a/./b", "a//b" and "a/b" collide, and a file "x" collides with a directory "x/".
 */
export function duplicateKey(name: string): string {
  // Most names are already their own key: ASCII (NFC leaves it alone) without empty or "." segments.
  if (CANONICAL_ASCII.test(name)) return name;
  return name
    .normalize('NFC')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/**
 * Whether a symlink entry's target stays inside the archive root once resolved from the link's
 * folder: not absolute, and no ".." climbs above the root. An extractor that follows an escaping
 * link could write or read outside its folder (the classic "zip slip via symlink").
 */
export function symlinkTargetIsContained(linkName: string, target: string): boolean {
  if (target.length === 0 || target.startsWith('/') || target.startsWith('\\') || /^[A-Za-z]:/.test(target) || target.includes('\u0000')) return false;
  const depth: string[] = linkName.split('/').slice(0, -1).filter((s) => s !== '' && s !== '.');
  for (const segment of target.split(/[\\/]/)) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (depth.length === 0) return false;
      depth.pop();
    } else {
      depth.push(segment);
    }
  }
  return true;
}
