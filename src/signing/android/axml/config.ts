// ResTable_config: the qualifiers (locale, density, SDK level, ...) of one resource variant.
// Only the fields Signet ranks on are decoded; the others are summarised by `otherQualifiers`
// so that "the least specific variant" can be chosen.
import { invalid, u16, u32, u8 } from './chunk.ts';

// ResourceTypes.h: ResTable_config::DENSITY_*
export const DENSITY_DEFAULT = 0;
export const DENSITY_MEDIUM = 160;
export const DENSITY_ANY = 0xfffe;
export const DENSITY_NONE = 0xffff;

export interface ResConfig {
  /** BCP 47-style "fr", "en-US", "b+sr+Latn" simplified to "sr-Latn"; "" for the default locale. */
  readonly locale: string;
  /** dpi, or DENSITY_DEFAULT (0), DENSITY_ANY (0xfffe, "anydpi"), DENSITY_NONE (0xffff, "nodpi"). */
  readonly density: number;
  readonly sdkVersion: number;
  /** How many qualifiers other than locale, density and sdkVersion are set (night mode, sizes, ...). */
  readonly otherQualifiers: number;
}

/**
 * Parses the size-prefixed ResTable_config at `offset`. Older tables carry shorter configs;
 * ResTable_config::copyFromDtoH treats the missing tail as zero, and so do we.
 */
export function readConfig(buf: Buffer, offset: number, limit: number): { config: ResConfig; size: number } {
  const what = 'ResTable_config';
  const size = u32(buf, offset, what);
  // ResourceTypes.h: the smallest config ever written is 28 bytes (through `version`).
  if (size < 28 || offset + size > limit) invalid(`${what}: size ${size} does not fit`);
  const field = (at: number, width: 1 | 2 | 4): number => {
    if (at + width > size) return 0;
    if (width === 1) return u8(buf, offset + at, what);
    if (width === 2) return u16(buf, offset + at, what);
    return u32(buf, offset + at, what);
  };
  // Offsets within ResTable_config (ResourceTypes.h):
  //   4 imsi(mcc,mnc) 8 language[2] 10 country[2] 12 orientation 13 touchscreen 14 density
  //   16 input(keyboard,navigation,inputFlags,pad) 20 screenSize 24 sdkVersion 26 minorVersion
  //   28 screenLayout 29 uiMode 30 smallestScreenWidthDp 32 screenSizeDp 36 localeScript[4]
  //   40 localeVariant[8] 48 screenLayout2 49 colorMode 52 localeScriptWasComputed
  const language = unpackLanguageOrRegion(field(8, 1), field(9, 1), 0x61 /* 'a' */);
  const region = unpackLanguageOrRegion(field(10, 1), field(11, 1), 0x30 /* '0' */);
  // 52 localeScriptWasComputed: aapt fills in a likely script (zh-CN → Hans) for matching; such a
  // script is not part of the qualifier the developer wrote (ResTable_config::getBcp47Locale).
  const script = size >= 40 && field(52, 1) === 0 ? ascii(buf, offset + 36, 4) : '';
  let locale = language;
  if (locale !== '' && script !== '') locale += `-${script}`;
  if (locale !== '' && region !== '') locale += `-${region}`;
  const others = [
    field(4, 4), field(12, 1), field(13, 1), field(16, 4), field(20, 4), field(28, 1), field(29, 1),
    field(30, 2), field(32, 4), size >= 48 ? field(40, 4) | field(44, 4) : 0, field(48, 1), field(49, 1),
  ];
  return {
    size,
    config: {
      locale,
      density: field(14, 2),
      sdkVersion: field(24, 2),
      otherQualifiers: others.filter((v) => v !== 0).length,
    },
  };
}

/**
 * ResTable_config::unpackLanguageOrRegion: two plain ASCII letters, or, when the high bit of
 * the first byte is set, three 5-bit letters packed into 15 bits (ISO 639-2 languages).
 */
function unpackLanguageOrRegion(b0: number, b1: number, base: number): string {
  if (b0 === 0 && b1 === 0) return '';
  if ((b0 & 0x80) !== 0) {
    const first = b1 & 0x1f;
    const second = ((b1 & 0xe0) >> 5) + ((b0 & 0x03) << 3);
    const third = (b0 & 0x7c) >> 2;
    return String.fromCharCode(first + base, second + base, third + base);
  }
  return String.fromCharCode(b0, b1).replace(/\0+$/, '');
}

function ascii(buf: Buffer, offset: number, length: number): string {
  let out = '';
  for (let i = 0; i < length && offset + i < buf.length; i++) {
    const c = buf[offset + i]!;
    if (c === 0) break;
    if (c < 0x20 || c > 0x7e) return '';
    out += String.fromCharCode(c);
  }
  return out;
}
