// The HTML document every public page shares: language, viewport, the static stylesheet (and
// the script where a page needs it), no inline code; plus the footer's language switcher.
import { html, type Html } from '../html.ts';
import { LANGUAGES, messages, type Language } from '../i18n/index.ts';
import { pageAssets } from './page-assets.ts';

export interface DocumentOptions {
  language: Language;
  title: string;
  body: Html;
  /** Extra <head> markup: Open Graph tags, a timed refresh. */
  head?: Html;
  /** Load the page script (the iPad install button). */
  script?: boolean;
}

export function renderDocument(options: DocumentOptions): string {
  const { style, script } = pageAssets();
  return `<!doctype html>
${html`<html lang="${options.language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
<title>${options.title}</title>
<link rel="stylesheet" href="${style.path}">
${options.script ? html`<script src="${script.path}" defer></script>` : ''}
${options.head ?? ''}
</head>
<body>
${options.body}
</body>
</html>`}
`;
}

/**
 * Links to this same page in every language (`?lang=`, kept by a cookie for the next pages).
 * `url` is the request's path and query.
 */
export function languageSwitcher(language: Language, url: string): Html {
  const t = messages(language);
  const links = LANGUAGES.map((l) => {
    const target = new URL(url, 'http://page.invalid');
    target.searchParams.set('lang', l);
    const href = `${target.pathname}${target.search}`;
    return l === language
      ? html`<a href="${href}" lang="${l}" hreflang="${l}" aria-current="true">${messages(l).languageName}</a>`
      : html`<a href="${href}" lang="${l}" hreflang="${l}">${messages(l).languageName}</a>`;
  });
  return html`<nav aria-label="${t.languageSwitch}">${links}</nav>`;
}

/** The footer: optional links, then the language switcher. */
export function pageFooter(language: Language, url: string, extra: Html | null = null): Html {
  return html`<footer>${extra ?? ''}${languageSwitcher(language, url)}</footer>`;
}
