// Scalar formatting exactly as CoreFoundation's XML plist writer prints it (CFPropertyList.c
// `_CFAppendXML0`, CFNumber.c `__CFNumberCreateFormattingDescriptionAsFloat64`). Shared by the XML
// writer (which must reproduce Apple's bytes) and its tests.
import { SigningError } from '../errors.ts';
import { APPLE_EPOCH_MS } from './model.ts';

/**
 * CFNumber.c: NaN → "nan", ±∞ → "+infinity"/"-infinity", ±0 → "0.0", otherwise printf
 * `%.*g` with DBL_DIG + 2 = 17 significant digits. Computed from the double's exact decimal
 * expansion with round-half-even, as Apple's libc does, so ties round like `printf`.
 */
export function formatReal(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return '+infinity';
  if (value === -Infinity) return '-infinity';
  if (value === 0) return '0.0';
  const negative = value < 0;
  const { digits, exponent } = roundSignificant(exactDecimal(Math.abs(value)), 17);
  // %g: scientific when the exponent is < -4 or ≥ the precision; trailing zeros removed.
  let body: string;
  if (exponent < -4 || exponent >= 17) {
    const mantissa = stripZeros(digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits);
    const sign = exponent < 0 ? '-' : '+';
    body = `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  } else if (exponent >= 0) {
    const intPart = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
    const frac = digits.slice(exponent + 1);
    body = stripZeros(frac ? `${intPart}.${frac}` : intPart);
  } else {
    body = stripZeros(`0.${'0'.repeat(-exponent - 1)}${digits}`);
  }
  return negative ? `-${body}` : body;
}

function stripZeros(text: string): string {
  if (!text.includes('.')) return text;
  return text.replace(/0+$/, '').replace(/\.$/, '');
}

/** Exact decimal digits of a positive finite double and the power of ten of the first digit. */
function exactDecimal(value: number): { digits: string; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const biasedExp = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  let exp2: number;
  if (biasedExp === 0) exp2 = -1074;
  else {
    mantissa |= 1n << 52n;
    exp2 = biasedExp - 1075;
  }
  // value = mantissa · 2^exp2 = (mantissa · 5^-exp2) · 10^exp2 when exp2 < 0.
  let digitsBig: bigint;
  let scale: number; // value = digitsBig · 10^scale
  if (exp2 >= 0) {
    digitsBig = mantissa << BigInt(exp2);
    scale = 0;
  } else {
    digitsBig = mantissa * 5n ** BigInt(-exp2);
    scale = exp2;
  }
  const text = digitsBig.toString();
  return { digits: text, exponent: text.length - 1 + scale };
}

function roundSignificant(exact: { digits: string; exponent: number }, precision: number): { digits: string; exponent: number } {
  const { digits } = exact;
  let { exponent } = exact;
  if (digits.length <= precision) return { digits: digits.replace(/0+$/, '') || '0', exponent };
  let kept = BigInt(digits.slice(0, precision));
  const rest = digits.slice(precision);
  const first = rest.charCodeAt(0) - 48;
  const beyondHalf = /[1-9]/.test(rest.slice(1));
  if (first > 5 || (first === 5 && (beyondHalf || kept % 2n === 1n))) kept += 1n;
  let text = kept.toString();
  if (text.length > precision) {
    exponent += 1;
    text = text.slice(0, precision);
  }
  return { digits: text.replace(/0+$/, '') || '0', exponent };
}

/**
 * CFPropertyList.c: `%04d-%02d-%02dT%02d:%02d:%02dZ` of the Gregorian (UTC) breakdown, seconds
 * truncated — i.e. the absolute time floored to a whole second.
 */
export function formatDate(absoluteTime: number): string {
  const ms = Math.floor(absoluteTime) * 1000 + APPLE_EPOCH_MS;
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(ms) || Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
    throw new SigningError('plist_invalid', 'plist date is outside the years 0001–9999 an XML plist can hold');
  }
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${String(year).padStart(4, '0')}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}Z`;
}

/** CFPropertyList.c `_appendEscapedString`: only `<`, `>` and `&` are escaped. */
export function escapeXmlText(text: string): string {
  if (!/[<>&]/.test(text)) return text;
  return text.replace(/[<>&]/g, (ch) => (ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : '&amp;'));
}

/**
 * CFPropertyList.c `_XMLPlistAppendDataUsingBase64`: lines of 76 − 8·indent base64 characters
 * (indent capped at 8), each line prefixed by `indent` tabs and ended by "\n".
 */
export function base64Lines(bytes: Uint8Array, indent: number): string {
  const capped = Math.min(indent, 8);
  const lineLength = 76 - 8 * capped;
  const encoded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  const tabs = '\t'.repeat(capped);
  let out = '';
  for (let i = 0; i < encoded.length; i += lineLength) out += `${tabs}${encoded.slice(i, i + lineLength)}\n`;
  return out;
}
