// What link-preview agents get instead of an install page or a download: the Open Graph card
// (title, icon, version) and nothing a person would act on.
import { html } from '../html.ts';
import type { Language } from '../i18n/index.ts';
import { previewTags, type PreviewModel } from '../link-preview.ts';
import { renderDocument } from './layout.ts';

export function renderPreviewPage(language: Language, preview: PreviewModel): string {
  const body = html`<main class="page"><section class="card hero">
${preview.imageUrl ? html`<img class="icon" src="${preview.imageUrl}" alt="" width="112" height="112">` : ''}
<h1>${preview.title}</h1>
<p class="subtitle">${preview.description}</p>
</section></main>`;
  return renderDocument({ language, title: preview.title, body, head: previewTags(preview) });
}
