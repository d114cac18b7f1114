// /docs: a self-contained HTML reference rendered from the OpenAPI document on the server (no
// scripts, no CDN), so it works offline and behind strict CSPs.
import { escapeHtml } from '../distribution/html.ts';

type Schema = { type?: string; properties?: Record<string, Schema>; required?: string[]; description?: string; items?: Schema; anyOf?: Schema[]; const?: unknown; format?: string };
type Operation = {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
  security?: unknown[];
};
type Doc = {
  info: { title: string; version: string; description?: string };
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation> & { servers?: Array<{ url: string }> }>;
  'x-error-catalogue'?: Array<{ code: string; status: number; message: string }>;
};

const escape = (text: unknown): string => escapeHtml(String(text));
const code = (text: string): string => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

function typeOf(schema: Schema | undefined): string {
  if (!schema) return '';
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === 'array') return `${typeOf(schema.items)}[]`;
  return schema.format ? `${schema.type ?? 'any'} (${schema.format})` : (schema.type ?? 'any');
}

function fields(schema: Schema | undefined): string {
  if (!schema?.properties) return '';
  const rows = Object.entries(schema.properties)
    .map(([name, s]) => `<tr><td><code>${escape(name)}</code>${schema.required?.includes(name) ? ' <em>required</em>' : ''}</td><td>${escape(typeOf(s))}</td><td>${code(s.description ?? '')}</td></tr>`)
    .join('');
  return `<table><tr><th>Field</th><th>Type</th><th>Description</th></tr>${rows}</table>`;
}

function operation(method: string, path: string, op: Operation, base: string): string {
  const params = (op.parameters ?? [])
    .map((p) => `<tr><td><code>${escape(p.name)}</code> (${escape(p.in)})${p.required ? ' <em>required</em>' : ''}</td><td>${escape(typeOf(p.schema))}</td><td>${code(p.description ?? p.schema?.description ?? '')}</td></tr>`)
    .join('');
  const body = Object.entries(op.requestBody?.content ?? {})
    .map(([type, c]) => `<p>Body (<code>${escape(type)}</code>)</p>${fields(c.schema)}`)
    .join('');
  const responses = Object.entries(op.responses ?? {})
    .map(([status, r]) => `<li><strong>${escape(status)}</strong> ${code(r.description ?? '').replaceAll('\n', '<br>')}</li>`)
    .join('');
  return `<section class="op"><h3><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(base + path)}</code></h3>
<p>${code(op.summary ?? '')}</p>${op.description ? `<p>${code(op.description)}</p>` : ''}
${params ? `<table><tr><th>Parameter</th><th>Type</th><th>Description</th></tr>${params}</table>` : ''}${body}
<ul class="responses">${responses}</ul></section>`;
}

export function renderDocsPage(doc: Doc): string {
  const apiBase = new URL(doc.servers?.[0]?.url ?? 'http://localhost/v1').pathname.replace(/\/$/, '');
  const sections = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    const base = item.servers ? '' : apiBase;
    for (const [method, op] of Object.entries(item)) {
      if (method === 'servers') continue;
      const o = op as Operation;
      const tag = o.tags?.[0] ?? 'Other';
      sections.set(tag, [...(sections.get(tag) ?? []), operation(method, path, o, base)]);
    }
  }
  const catalogue = (doc['x-error-catalogue'] ?? [])
    .map((e) => `<tr><td><code>${escape(e.code)}</code></td><td>${e.status}</td><td>${escape(e.message)}</td></tr>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(doc.info.title)} ${escape(doc.info.version)}</title><style>${DOCS_STYLE}</style></head><body><h1>${escape(doc.info.title)} <small>${escape(doc.info.version)}</small></h1>
<p>${code(doc.info.description ?? '')}</p><p>Base URL: <code>${escape(doc.servers?.[0]?.url ?? '')}</code> · <a href="${escape(apiBase)}/openapi.json">openapi.json</a></p>
${[...sections].map(([tag, ops]) => `<h2>${escape(tag)}</h2>${ops.join('\n')}`).join('\n')}
<h2>Error catalogue</h2><table><tr><th>error</th><th>HTTP</th><th>Meaning</th></tr>${catalogue}</table></body></html>`;
}

/** The page's one inline style, allowed by its hash in the Content-Security-Policy. */
export const DOCS_STYLE = `
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code{font:13px ui-monospace,monospace;background:#f2f2f5;padding:0 .25em;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border-bottom:1px solid #e5e5ea;padding:.3rem .5rem;text-align:left;vertical-align:top}
.op{border:1px solid #e5e5ea;border-radius:8px;padding:.25rem 1rem;margin:1rem 0}.m{font:bold 12px monospace;padding:.15rem .4rem;border-radius:4px;color:#fff}
.get{background:#0a7d32}.post{background:#0058c7}.delete{background:#c4161c}.responses{font-size:14px}
`;
