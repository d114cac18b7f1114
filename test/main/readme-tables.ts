// The README's configuration and error tables, rendered from SETTINGS (src/config.ts) and the
// error catalogue with its HTTP statuses. test/main/readme.test.ts fails when the README differs;
// `node test/main/readme-tables.ts --write` rewrites the two marked sections.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SETTINGS } from '../../src/config.ts';
import { catalogueRows } from '../../src/http/error-status.ts';
import { repoRoot } from '../support/fixtures.ts';

export const README = path.join(repoRoot, 'README.md');
const cell = (text: string) => text.replaceAll('|', '\\|');

export function configTable(): string {
  const rows = SETTINGS.map((s) => `| \`${s.name}\` | ${s.default === '' ? '—' : `\`${cell(s.default)}\``} | ${cell(s.description)} |`);
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

export function errorTable(): string {
  const rows = catalogueRows().map((r) => `| \`${r.code}\` | ${r.status} | ${cell(r.message)} |`);
  return ['| `error` | HTTP | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The text between `<!-- name:begin -->` and `<!-- name:end -->`, trimmed. */
export function section(readme: string, name: string): string | null {
  const match = new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(readme);
  return match?.[1]?.trim() ?? null;
}

function replaceSection(readme: string, name: string, body: string): string {
  return readme.replace(new RegExp(`(<!-- ${name}:begin -->\\n)[\\s\\S]*?(\\n<!-- ${name}:end -->)`), `$1${body}$2`);
}

if (process.argv.includes('--write')) {
  let readme = readFileSync(README, 'utf8');
  readme = replaceSection(readme, 'config', configTable());
  readme = replaceSection(readme, 'errors', errorTable());
  writeFileSync(README, readme);
}
