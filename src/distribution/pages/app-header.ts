// The app's face on every page that names it: its icon (or a lettered placeholder).
import { html, type Html } from '../html.ts';
import type { Messages } from '../i18n/index.ts';

export function appIcon(t: Messages, name: string, iconUrl: string | null): Html {
  return iconUrl
    ? html`<img class="icon" src="${iconUrl}" alt="${t.iconAlt(name)}" width="112" height="112">`
    : html`<div class="icon placeholder" role="img" aria-label="${t.iconAlt(name)}">${[...name][0]?.toUpperCase() ?? '?'}</div>`;
}
