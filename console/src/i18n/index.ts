// vue-i18n set-up: English and Simplified Chinese, chosen from the browser's languages on the
// first visit, switchable, and remembered in localStorage.
import { createI18n } from 'vue-i18n';
import { en } from './en.ts';
import { zhCN } from './zh-CN.ts';

export const LOCALES = [
  { code: 'en', name: 'English' },
  { code: 'zh-CN', name: '简体中文' },
] as const;
export type Locale = (typeof LOCALES)[number]['code'];
const STORAGE_KEY = 'signet.locale';

export function initialLocale(): Locale {
  const saved = localStorage.getItem(STORAGE_KEY);
  if (saved === 'en' || saved === 'zh-CN') return saved;
  for (const language of navigator.languages ?? [navigator.language]) {
    if (/^zh\b/i.test(language)) return 'zh-CN';
    if (/^en\b/i.test(language)) return 'en';
  }
  return 'en';
}

export const i18n = createI18n({
  legacy: false,
  locale: initialLocale(),
  fallbackLocale: 'en',
  messages: { en, 'zh-CN': zhCN },
});

export function setLocale(locale: Locale): void {
  i18n.global.locale.value = locale;
  localStorage.setItem(STORAGE_KEY, locale);
  document.documentElement.lang = locale;
}
