// The GitHub Action's entry point (action.yml at the repository root runs it on node24): the
// same upload → task → wait as `signet-cli upload`, with GitHub's contract: inputs from INPUT_*
// variables, outputs appended to $GITHUB_OUTPUT, a job summary (link and QR image) appended to
// $GITHUB_STEP_SUMMARY, errors as ::error:: annotations. Imports nothing outside node: and this
// package's own files (the action runs from a checkout without node_modules).
import { appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from './api.js';
import { CliError, EXIT, UsageError } from './errors.js';
import { parseDuration } from './format.js';
import { uploadAndSign } from './flow.js';

/** GitHub passes input `api-key` as INPUT_API-KEY (upper case, hyphens kept). */
function input(name: string, options: { required?: boolean; fallback?: string } = {}): string {
  const value = (process.env[`INPUT_${name.toUpperCase()}`] ?? '').trim();
  if (value === '' && options.required) throw new UsageError(`Input required and not supplied: ${name}`);
  return value === '' ? (options.fallback ?? '') : value;
}

/** Escapes what workflow commands treat specially (%, CR, LF). */
const escapeData = (text: string) => text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');

async function setOutput(name: string, value: string): Promise<void> {
  const file = process.env.GITHUB_OUTPUT;
  if (!file) {
    process.stdout.write(`${name}=${value}\n`);
    return;
  }
  // The multi-line form with a delimiter the value cannot contain.
  const delimiter = `signet_${Math.random().toString(36).slice(2)}`;
  await appendFile(file, `${name}<<${delimiter}${os.EOL}${value}${os.EOL}${delimiter}${os.EOL}`);
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function summary(task: any): string {
  const name = [task.app?.name ?? task.file_name, task.app?.version ? `${task.app.version}${task.app.build ? ` (${task.app.build})` : ''}` : null].filter(Boolean).join(' ');
  if (task.status !== 'succeeded') {
    return `### Signet: ${escapeHtml(name)} — ${task.status}\n\n\`${task.error?.code ?? task.status}\`: ${escapeHtml(task.error?.message ?? '')}\n`;
  }
  const links = task.links;
  if (!links) return `### Signet: ${escapeHtml(name)} signed\n\nTask \`${task.task_id}\`: [signed package](${task.artifact?.download_url ?? ''})\n`;
  const rows = [
    `| Install page | ${links.install_url} |`,
    ...(links.app_url ? [`| App page (newest release) | ${links.app_url} |`] : []),
    `| ${links.itms_services_url ? 'itms-services' : 'Download'} | ${links.itms_services_url ? `\`${links.itms_services_url}\`` : links.download_url} |`,
    `| Task | \`${task.task_id}\` |`,
  ];
  return [
    `### Signet: ${escapeHtml(name)} signed`,
    '',
    `<a href="${escapeHtml(links.install_url)}"><img src="${escapeHtml(links.qr_code_url)}" width="180" height="180" alt="QR code of the install page"></a>`,
    '',
    '| | |',
    '|---|---|',
    ...rows,
    '',
  ].join('\n');
}

export async function runAction(): Promise<number> {
  const url = input('url', { required: true });
  const key = input('api-key', { required: true });
  // Masked in the log even if a step echoes it by mistake.
  process.stdout.write(`::add-mask::${escapeData(key)}\n`);
  const file = input('file', { required: true });
  const certType = input('cert-type', { fallback: 'enterprise' });
  if (certType !== 'enterprise' && certType !== 'super') throw new UsageError('cert-type is enterprise or super.');
  const wait = input('wait', { fallback: 'true' });
  if (!['true', 'false'].includes(wait)) throw new UsageError('wait is true or false.');
  const timeoutText = input('timeout', { fallback: '15m' });
  const notes = input('notes') || undefined;
  const api = new Client({ url, key, retries: 5, userAgent: `signet-action node/${process.versions.node}`, log: (line) => process.stdout.write(`${line}\n`) });
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  const result = await uploadAndSign(api, {
    file: path.resolve(workspace, file),
    certType,
    notes,
    wait: wait === 'true',
    timeoutMs: parseDuration(timeoutText, 'timeout'),
    timeoutText,
    stateDir: path.join(process.env.RUNNER_TEMP ?? os.tmpdir(), 'signet-cli'),
    info: (line) => process.stdout.write(`${line}\n`),
  });
  const task = result.task;
  await setOutput('task-id', task.task_id);
  await setOutput('file-key', result.upload.file_key);
  if (wait === 'false') return EXIT.ok;
  await setOutput('status', task.status);
  await setOutput('install-url', task.links?.install_url ?? '');
  await setOutput('app-url', task.links?.app_url ?? '');
  await setOutput('download-url', task.links?.itms_services_url ?? task.links?.download_url ?? task.artifact?.download_url ?? '');
  if (process.env.GITHUB_STEP_SUMMARY) await appendFile(process.env.GITHUB_STEP_SUMMARY, summary(task));
  if (task.status !== 'succeeded') {
    process.stdout.write(`::error title=Signet task ${task.status}::${escapeData(`${task.error?.code ?? task.status}: ${task.error?.message ?? ''}`)}\n`);
    return EXIT.failed;
  }
  process.stdout.write(`Install page: ${task.links?.install_url ?? ''}\n`);
  return EXIT.ok;
}

try {
  process.exitCode = await runAction();
} catch (error) {
  const message = error instanceof CliError ? `${error.code === 'usage' ? '' : `${error.code}: `}${error.message}` : error instanceof Error ? error.message : String(error);
  process.stdout.write(`::error title=Signet::${escapeData(message)}\n`);
  process.exitCode = error instanceof CliError ? error.exitCode : EXIT.unavailable;
}
