// Release notes as the install page and the history show them: text from whoever holds an API
// key, shown to anyone with the link, so it must never become markup of its own. Rendered as
// Markdown by markdown-it (maintained, CommonMark) with raw HTML off (`<script>` stays text),
// its link validation (no javascript:/vbscript:/file:/data: URLs), and the rules that would
// load or style anything turned off: images (tracking pixels, the CSP's img-src) and tables
// (their alignment is an inline style attribute, which the CSP refuses). Single line breaks are
// kept (`breaks`), as people type notes in a text box.
// markdown-it is loaded on the first release with notes (require: synchronous, and ~10 MB of
// code a server whose releases carry no notes never loads).
import { createRequire } from 'node:module';
import type MarkdownItClass from 'markdown-it';
import { raw, type Html } from '../html.ts';

type MarkdownIt = InstanceType<typeof MarkdownItClass>;

let markdown: MarkdownIt | null = null;

function renderer(): MarkdownIt {
  if (markdown) return markdown;
  const MarkdownItCtor = createRequire(import.meta.url)('markdown-it') as typeof MarkdownItClass;
  const md = new MarkdownItCtor('default', { html: false, linkify: true, breaks: true, typographer: false });
  md.disable(['image', 'table']);
  // Links leave Signet's page: no referrer, no opener, no ranking credit.
  const renderLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx]!.attrSet('rel', 'nofollow noopener noreferrer');
    return renderLinkOpen(tokens, idx, options, env, self);
  };
  return (markdown = md);
}

export function renderReleaseNotes(text: string): Html {
  return raw(renderer().render(text));
}
