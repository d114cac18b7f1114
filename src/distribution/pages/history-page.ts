// An app's version history (/a/{slug}/history): each release once, newest first, with its true
// state; only releases that can still be installed link to their page.
import { html } from '../html.ts';
import { formatDate, messages, type Language, type Messages } from '../i18n/index.ts';
import type { ReleaseState } from '../service.ts';
import { appIcon } from './app-header.ts';
import { pageFooter, renderDocument } from './layout.ts';
import { renderReleaseNotes } from './release-notes.ts';

export interface HistoryRow {
  version: string | null;
  build: string | null;
  date: Date;
  url: string;
  state: ReleaseState;
  /** Release notes (plain text or Markdown), shown folded under the release's row. */
  notes: string | null;
}

export interface HistoryPageModel {
  language: Language;
  requestUrl: string;
  appName: string;
  iconUrl: string | null;
  rows: readonly HistoryRow[];
}

export function renderHistoryPage(model: HistoryPageModel): string {
  const t = messages(model.language);
  const rows = model.rows.map((row) => {
    const usable = row.state === 'available' || row.state === 'password';
    const version = row.version ?? '—';
    // The notes fold under their release (no script: <details>), so the table stays scannable.
    const notes = row.notes === null ? '' : html`<tr class="notes-row"><td colspan="4"><details class="notes"><summary>${t.whatsNew}</summary><div class="body">${renderReleaseNotes(row.notes)}</div></details></td></tr>`;
    return html`<tr data-state="${row.state}"><td>${usable ? html`<a href="${row.url}">${version}</a>` : version}</td><td>${row.build ?? ''}</td><td>${formatDate(model.language, row.date)}</td><td><span class="state state-${row.state}">${stateLabel(t, row.state)}</span></td></tr>${notes}`;
  });
  const table = model.rows.length === 0
    ? html`<p class="message">${t.historyEmpty}</p>`
    : html`<table><caption>${t.historyCaption}</caption><thead><tr><th scope="col">${t.historyVersion}</th><th scope="col">${t.historyBuild}</th><th scope="col">${t.historyDate}</th><th scope="col">${t.historyStatus}</th></tr></thead><tbody>${rows}</tbody></table>`;
  const body = html`<main class="page"><section class="card hero" aria-labelledby="app-name">
${appIcon(t, model.appName, model.iconUrl)}
<h1 id="app-name">${model.appName}</h1>
<p class="subtitle">${t.historyHeading}</p>
</section>
<section class="card">${table}</section>
${pageFooter(model.language, model.requestUrl)}</main>`;
  return renderDocument({ language: model.language, title: t.historyTitle(model.appName), body });
}

function stateLabel(t: Messages, state: ReleaseState): string {
  switch (state) {
    case 'available': return t.stateAvailable;
    case 'password': return t.statePassword;
    case 'expired': return t.stateExpired;
    case 'disabled': return t.stateDisabled;
    case 'exhausted': return t.stateExhausted;
  }
}
