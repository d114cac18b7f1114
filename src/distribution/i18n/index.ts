// The languages of the public pages (install, password, history, errors, device registration)
// and how one is chosen for a visitor. Order, first match wins:
//   1. `?lang=` in the URL: an explicit choice (the pages' language switcher links set it);
//   2. the `signet_lang` cookie, which remembers that choice for the visitor's next pages;
//   3. WeChat's `Language/zh_CN` user-agent token: WeChat's own language, which its in-app
//      browser does not always send as Accept-Language;
//   4. Accept-Language (RFC 9110 §12.5.4), by quality;
//   5. English.
// Chinese tags map by script: zh-Hans, zh-CN, zh-SG and bare zh → zh-CN; zh-Hant, zh-TW, zh-HK
// and zh-MO → zh-TW (BCP 47, RFC 5646; Hong Kong and Macau write Traditional characters).
import { en, type Messages } from './en.ts';
import { zhCN } from './zh-CN.ts';
import { zhTW } from './zh-TW.ts';

export type { Messages } from './en.ts';

export const LANGUAGES = ['en', 'zh-CN', 'zh-TW'] as const;
export type Language = (typeof LANGUAGES)[number];

export const CATALOGUES: Readonly<Record<Language, Messages>> = { en, 'zh-CN': zhCN, 'zh-TW': zhTW };

/** The cookie that remembers a `?lang=` choice. */
export const LANGUAGE_COOKIE = 'signet_lang';

export interface LanguageHints {
  query?: string | undefined;
  cookie?: string | undefined;
  userAgent?: string | undefined;
  acceptLanguage?: string | undefined;
}

export function messages(language: Language): Messages {
  return CATALOGUES[language];
}

export function chooseLanguage(hints: LanguageHints): Language {
  const explicit = languageOfTag(hints.query) ?? languageOfTag(hints.cookie);
  if (explicit) return explicit;
  const wechat = /\bMicroMessenger\/.*\bLanguage\/([A-Za-z]{2,3}(?:[_-][A-Za-z0-9]{2,8})*)/.exec(hints.userAgent ?? '');
  const fromWechat = languageOfTag(wechat?.[1]);
  if (fromWechat) return fromWechat;
  return fromAcceptLanguage(hints.acceptLanguage) ?? 'en';
}

/** A supported language for a BCP 47 tag (`_` accepted for `-`, case-insensitive), else null. */
export function languageOfTag(tag: string | undefined): Language | null {
  if (tag === undefined) return null;
  const parts = tag.trim().replace(/_/g, '-').toLowerCase().split('-');
  if (parts[0] === 'en') return 'en';
  if (parts[0] !== 'zh') return null;
  const rest = parts.slice(1);
  if (rest.includes('hant') || rest.some((p) => p === 'tw' || p === 'hk' || p === 'mo')) return 'zh-TW';
  return 'zh-CN';
}

/** The supported language the visitor prefers most (highest q, then header order). */
function fromAcceptLanguage(header: string | undefined): Language | null {
  if (!header) return null;
  const ranges = header.split(',').slice(0, 32).map((part, index) => {
    const [tag = '', ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
  });
  const best = ranges
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((r) => languageOfTag(r.tag))
    .find((l) => l !== null);
  return best ?? null;
}

/** A calendar date in the visitor's language (UTC: the server does not know their time zone). */
export function formatDate(language: Language, date: Date): string {
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeZone: 'UTC' }).format(date);
}

/** A date and time in the visitor's language, UTC, labelled as such. */
export function formatDateTime(language: Language, date: Date): string {
  return `${new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC', hourCycle: 'h23' }).format(date)} UTC`;
}

/** "in 3 days" / "3 天后": how far `date` is from `now`, in the largest unit that fits. */
export function formatRelative(language: Language, date: Date, now: Date): string {
  const seconds = (date.getTime() - now.getTime()) / 1000;
  const format = new Intl.RelativeTimeFormat(language, { numeric: 'auto' });
  const abs = Math.abs(seconds);
  if (abs < 3600) return format.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return format.format(Math.round(seconds / 3600), 'hour');
  return format.format(Math.round(seconds / 86_400), 'day');
}

export function formatNumber(language: Language, value: number): string {
  return new Intl.NumberFormat(language).format(value);
}

/** 1024-based sizes with the units app stores show ("12.3 MB"). */
export function formatSize(language: Language, bytes: number): string {
  const number = (value: number, digits: number) => new Intl.NumberFormat(language, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(value);
  if (bytes < 1024 * 1024) return `${number(Math.max(1, Math.round(bytes / 1024)), 0)} KB`;
  if (bytes < 1024 ** 3) return `${number(bytes / 1024 ** 2, 1)} MB`;
  return `${number(bytes / 1024 ** 3, 2)} GB`;
}
