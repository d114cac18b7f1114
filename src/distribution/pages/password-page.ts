// The password form of a protected install link. It names no app: the password is what
// entitles a visitor to see what the link installs.
import { html, raw } from '../html.ts';
import { messages, type Language } from '../i18n/index.ts';
import { pageFooter, renderDocument } from './layout.ts';

export interface PasswordPageModel {
  language: Language;
  requestUrl: string;
  /** Where the form posts (the page's own path). */
  action: string;
  wrongPassword: boolean;
}

const LOCK = html`<div class="lock" aria-hidden="true"><svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"><rect x="5" y="10.5" width="14" height="10" rx="2.5"/><path d="M8 10.5V7.5a4 4 0 0 1 8 0v3"/></svg></div>`;

export function renderPasswordPage(model: PasswordPageModel): string {
  const t = messages(model.language);
  const body = html`<main class="page"><section class="card hero" aria-labelledby="title">
${LOCK}
<h1 id="title">${t.passwordTitle}</h1>
<p class="message">${t.passwordIntro}</p>
<form method="post" action="${model.action}">
<label for="password">${t.passwordLabel}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${model.wrongPassword ? raw(' aria-invalid="true" aria-describedby="password-error"') : ''}>
${model.wrongPassword ? html`<p class="notice bad" id="password-error" role="alert">${t.passwordWrong}</p>` : ''}
<button class="button" type="submit">${t.passwordSubmit}</button>
</form>
</section>
${pageFooter(model.language, model.requestUrl)}</main>`;
  return renderDocument({ language: model.language, title: t.passwordTitle, body });
}
