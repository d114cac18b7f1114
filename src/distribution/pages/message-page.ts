// Dead ends and errors: a clear title and message, no install affordance. Links that stopped
// working (expired, disabled, download limit reached) still show which app they were for —
// icon, name and version — unless the link is password protected.
import { html, type Html } from '../html.ts';
import { messages, type Language } from '../i18n/index.ts';
import { appIcon } from './app-header.ts';
import { pageFooter, renderDocument } from './layout.ts';

export interface MessagePageModel {
  language: Language;
  /** Path and query of this request (the language switcher links back to it). */
  requestUrl: string;
  title: string;
  message: string;
  /** The app the link was for; null when it may not be named (or is unknown). */
  app?: { name: string; version: string | null; iconUrl: string | null } | null;
  /** Extra head markup (Open Graph tags for link previews). */
  head?: Html;
}

const SIGN = html`<div class="lock" aria-hidden="true"><svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"><circle cx="12" cy="12" r="9"/><path d="M12 7.5v5.5"/><path d="M12 16.5h.01"/></svg></div>`;

export function renderMessagePage(model: MessagePageModel): string {
  const t = messages(model.language);
  const { app } = model;
  const card = app
    ? html`<section class="card hero" aria-labelledby="app-name">
${appIcon(t, app.name, app.iconUrl)}
<h1 id="app-name">${app.name}</h1>
${app.version ? html`<p class="subtitle">${t.version(app.version, null)}</p>` : ''}
<p class="status" id="status">${model.title}</p>
<p class="message" role="status">${model.message}</p>
</section>`
    : html`<section class="card hero" aria-labelledby="title">
${SIGN}
<h1 id="title">${model.title}</h1>
<p class="message" role="status">${model.message}</p>
</section>`;
  return renderDocument({
    language: model.language,
    title: app ? `${app.name} — ${model.title}` : model.title,
    body: html`<main class="page">${card}${pageFooter(model.language, model.requestUrl)}</main>`,
    ...(model.head ? { head: model.head } : {}),
  });
}
