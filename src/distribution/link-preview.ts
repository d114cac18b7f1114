// Link previews: chat apps and social sites fetch a shared link to build a card (title, image,
// description). Those fetchers are not testers: they get an Open Graph page (ogp.me) naming the
// app — never the package — and never count as a download. Recognised by the tokens their
// operators document for their user agents; a protected link's preview names nothing.
import { html, type Html } from './html.ts';

/**
 * User-agent tokens of link-preview and crawler agents: Facebook and Messenger
 * (facebookexternalhit, Facebot), Apple iMessage and Spotlight (iMessage sends
 * "facebookexternalhit/1.1 Facebot Twitterbot/1.0"; Applebot), X (Twitterbot), LinkedIn
 * (LinkedInBot), Slack (Slackbot-LinkExpanding, Slack-ImgProxy), Telegram (TelegramBot),
 * Discord (Discordbot), WhatsApp ("WhatsApp/2.x"), Skype and Teams (SkypeUriPreview),
 * Microsoft's preview service (MicrosoftPreview), DingTalk (DingTalkBot-LinkService), Viber,
 * Mastodon, Pinterest, Reddit, VK, Embedly, Iframely, Snapchat, and the search crawlers
 * that ignore `noindex` until they have fetched the page.
 */
const PREVIEW_AGENTS = new RegExp(
  [
    'facebookexternalhit', 'Facebot', 'meta-externalagent', 'Twitterbot', 'LinkedInBot', 'Applebot', 'iMessageLinkPreviews',
    'Slackbot', 'Slack-ImgProxy', 'TelegramBot', 'Discordbot', 'WhatsApp/', 'SkypeUriPreview', 'MicrosoftPreview',
    'DingTalkBot', 'Viber', 'Mastodon/', 'Pinterestbot', 'redditbot', 'vkShare', 'Embedly', 'Iframely', 'Snap URL Preview',
    'Googlebot', 'bingbot', 'Baiduspider', 'YandexBot', 'DuckDuckBot', 'Sogou web spider', 'PetalBot', 'Bytespider', 'YisouSpider',
  ].map((token) => token.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'),
  'i',
);

/** Prefetches and previews announce themselves (Sec-Purpose: prefetch; Purpose/X-Purpose: preview). */
const PURPOSE = /\b(prefetch|preview)\b/i;

export function isLinkPreview(headers: { userAgent?: string | undefined; purpose?: string | undefined }): boolean {
  return PREVIEW_AGENTS.test(headers.userAgent ?? '') || PURPOSE.test(headers.purpose ?? '');
}

export interface PreviewModel {
  /** Absolute URL of the page the card links to. */
  url: string;
  title: string;
  description: string;
  /** Absolute URL of the app icon; null when there is none to show. */
  imageUrl: string | null;
  language: string;
}

/** The Open Graph and Twitter card tags for the <head> of a page. */
export function previewTags(preview: PreviewModel): Html {
  const locale = preview.language.replace('-', '_');
  return html`<meta property="og:type" content="website">
<meta property="og:url" content="${preview.url}">
<meta property="og:title" content="${preview.title}">
<meta property="og:description" content="${preview.description}">
<meta property="og:locale" content="${locale}">
<meta name="description" content="${preview.description}">
<meta name="twitter:card" content="summary">
<meta name="twitter:title" content="${preview.title}">
<meta name="twitter:description" content="${preview.description}">
${preview.imageUrl ? html`<meta property="og:image" content="${preview.imageUrl}">
<meta property="og:image:alt" content="${preview.title}">
<meta name="twitter:image" content="${preview.imageUrl}">` : ''}`;
}
