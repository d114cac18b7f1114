// Release notes as the install page shows them: text from whoever holds an API key, shown to
// anyone with the link, so it never becomes markup. Paragraphs are split at blank lines; line
// breaks inside a paragraph are kept (CSS white-space: pre-line). The stylesheet also styles
// the lists, headings, links and code a Markdown renderer produces.
import { html, type Html } from '../html.ts';

export function renderReleaseNotes(text: string): Html {
  const paragraphs = text.split(/\n{2,}/).map((p) => p.trim()).filter((p) => p !== '');
  return html`${paragraphs.map((p) => html`<p class="plain">${p}</p>`)}`;
}
