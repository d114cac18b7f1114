#!/usr/bin/env node
// signet-cli: upload an .ipa/.apk to Signet, sign it, and wait for its install link, from a
// build pipeline. Configuration comes from SIGNET_URL and SIGNET_API_KEY, or --url / --api-key.
// See errors.ts for the exit codes.
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Client } from './api.js';
import { CliError, EXIT, UsageError } from './errors.js';
import { parseDuration } from './format.js';
import { checkNotes, uploadAndSign } from './flow.js';
import { defaultStateDir } from './resumable.js';

const VERSION: string = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')).version;

const USAGE = `Usage: signet-cli <command> [options]

Commands:
  upload FILE [--cert-type enterprise|super] [--certificate crt_…] [--notes TEXT | --notes-file F]
              [--wait] [--timeout 15m] [--json] [--idempotency-key KEY]
      Uploads an .ipa or .apk and creates its signing task. With --wait, follows the task and
      prints the install page, the app's permanent link and a QR code.
  tasks get TASK_ID [--json]
  tasks list [--status S] [--limit N] [--json]
  tasks cancel TASK_ID [--json]
  link DST_ID [--password P | --no-password] [--expires 7d|ISO-date|never] [--max-downloads N|unlimited] [--json]
      Shows or changes an install link.

Options for every command:
  --url URL          Signet's address (default: $SIGNET_URL)
  --api-key KEY      API key (default: $SIGNET_API_KEY; prefer the variable, flags show in process lists)
  --retries N        Retries of a failed request, with backoff (default 5)
  --version, --help

Exit codes: 0 ok, 1 task failed (or request refused), 2 usage, 3 authentication/permission,
4 network or server unavailable after retries (or --timeout reached).`;

const COMMON = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  retries: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const satisfies ParseArgsConfig['options'];

const OPTIONS = {
  ...COMMON,
  'cert-type': { type: 'string' },
  certificate: { type: 'string' },
  notes: { type: 'string' },
  'notes-file': { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  'idempotency-key': { type: 'string' },
  status: { type: 'string' },
  limit: { type: 'string' },
  password: { type: 'string' },
  'no-password': { type: 'boolean' },
  expires: { type: 'string' },
  'max-downloads': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type Values = ReturnType<typeof parse>['values'];

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Options a command does not take are refused rather than ignored. */
function only(values: Values, allowed: readonly string[]): void {
  const extra = Object.keys(values).filter((name) => !(name in COMMON) && !allowed.includes(name));
  if (extra.length > 0) throw new UsageError(`--${extra[0]} does not apply to this command.`);
}

function client(values: Values): Client {
  const url = values.url ?? process.env.SIGNET_URL;
  const key = values['api-key'] ?? process.env.SIGNET_API_KEY;
  if (!url) throw new UsageError('Set SIGNET_URL (or --url) to the Signet server, e.g. https://signet.example.com.');
  if (!key) throw new UsageError('Set SIGNET_API_KEY (or --api-key) to an API key (sk_…).');
  const retries = values.retries === undefined ? 5 : Number(values.retries);
  if (!Number.isInteger(retries) || retries < 0 || retries > 20) throw new UsageError('--retries takes a whole number from 0 to 20.');
  return new Client({ url, key, retries, userAgent: `signet-cli/${VERSION} node/${process.versions.node}`, log: (line) => process.stderr.write(`${line}\n`) });
}

const out = (line = '') => process.stdout.write(`${line}\n`);
const info = (line: string) => process.stderr.write(`${line}\n`);

async function upload(positionals: string[], values: Values): Promise<number> {
  only(values, ['cert-type', 'certificate', 'notes', 'notes-file', 'wait', 'timeout', 'idempotency-key']);
  const [file, ...rest] = positionals;
  if (!file || rest.length > 0) throw new UsageError('upload takes one FILE (an .ipa or .apk).');
  const certType = values['cert-type'] ?? 'enterprise';
  if (certType !== 'enterprise' && certType !== 'super') throw new UsageError('--cert-type is enterprise or super.');
  if (values.notes !== undefined && values['notes-file'] !== undefined) throw new UsageError('Give --notes or --notes-file, not both.');
  let notes = values.notes;
  if (values['notes-file'] !== undefined) {
    notes = await readFile(values['notes-file'], 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read --notes-file ${values['notes-file']}: ${error.code ?? error.message}`);
    });
  }
  const timeoutText = values.timeout ?? '15m';
  const timeoutMs = parseDuration(timeoutText, '--timeout');
  checkNotes(notes);
  const api = client(values);
  const result = await uploadAndSign(api, {
    file,
    certType,
    certificate: values.certificate,
    notes,
    wait: values.wait === true,
    timeoutMs,
    timeoutText,
    idempotencyKey: values['idempotency-key'],
    stateDir: defaultStateDir(),
    info,
  });
  if (values.json) out(JSON.stringify(result, null, 2));
  if (!values.wait) {
    if (!values.json) out(result.task.task_id);
    return EXIT.ok;
  }
  return report(result.task, !values.json);
}

/** Prints a finished task; returns its exit code. */
async function report(task: any, human: boolean): Promise<number> {
  if (task.status !== 'succeeded') {
    const code = task.error?.code ?? task.status;
    info(`Task ${task.task_id} ${task.status}: ${code}${task.error?.message ? `: ${task.error.message}` : ''}`);
    return EXIT.failed;
  }
  if (!human) return EXIT.ok;
  const links = task.links;
  out(`Task ${task.task_id} succeeded`);
  if (!links) {
    out(`Signed package: ${task.artifact?.download_url ?? '(none)'}`);
    return EXIT.ok;
  }
  out(`Install page: ${links.install_url}`);
  if (links.app_url) out(`App page:     ${links.app_url}`);
  out(`${links.itms_services_url ? 'itms-services' : 'Download'}: ${links.itms_services_url ?? links.download_url}`);
  out();
  // Loaded here only: the GitHub Action (action.ts) runs without node_modules and never draws one.
  const { terminalQr } = await import('./qr.js');
  out(terminalQr(links.install_url));
  return EXIT.ok;
}

function taskLine(task: any): string {
  const app = [task.app?.name ?? task.file_name, task.app?.version].filter(Boolean).join(' ');
  return `${task.task_id}  ${task.status.padEnd(10)}  ${task.platform.padEnd(7)}  ${app}${task.error ? `  ${task.error.code}` : ''}`;
}

async function tasks(positionals: string[], values: Values): Promise<number> {
  const [action, id, ...rest] = positionals;
  if (action === 'list') {
    only(values, ['status', 'limit']);
    if (id !== undefined) throw new UsageError('tasks list takes no argument.');
    const limit = values.limit ?? '20';
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 100) throw new UsageError('--limit is 1 to 100.');
    const query = new URLSearchParams({ limit, ...(values.status ? { status: values.status } : {}) });
    const page = await client(values).request('GET', `/tasks?${query}`);
    if (values.json) out(JSON.stringify(page, null, 2));
    else for (const task of page.items) out(taskLine(task));
    return EXIT.ok;
  }
  if (action !== 'get' && action !== 'cancel') throw new UsageError('tasks takes get TASK_ID, list or cancel TASK_ID.');
  only(values, []);
  if (!id || rest.length > 0) throw new UsageError(`tasks ${action} takes one TASK_ID (tsk_…).`);
  const api = client(values);
  const task = action === 'get' ? await api.request('GET', `/tasks/${encodeURIComponent(id)}`) : await api.request('POST', `/tasks/${encodeURIComponent(id)}/cancel`);
  if (values.json) {
    out(JSON.stringify(task, null, 2));
    return EXIT.ok;
  }
  out(taskLine(task));
  if (task.error) out(`error: ${task.error.code}: ${task.error.message}`);
  if (task.links) {
    out(`install page: ${task.links.install_url}`);
    if (task.links.app_url) out(`app page: ${task.links.app_url}`);
  }
  return EXIT.ok;
}

async function link(positionals: string[], values: Values): Promise<number> {
  only(values, ['password', 'no-password', 'expires', 'max-downloads']);
  const [id, ...rest] = positionals;
  if (!id || rest.length > 0) throw new UsageError('link takes one DST_ID (dst_…; see the task\'s links.distribution_id).');
  const patch: Record<string, unknown> = {};
  if (values.password !== undefined && values['no-password']) throw new UsageError('Give --password or --no-password, not both.');
  if (values.password !== undefined) {
    if (values.password === '') throw new UsageError('--password needs a value; --no-password removes it.');
    patch.password = values.password;
  }
  if (values['no-password']) patch.password = null;
  if (values.expires !== undefined) {
    if (values.expires === 'never') patch.expires_at = null;
    else if (/^\d{4}-\d{2}-\d{2}/.test(values.expires)) {
      const at = new Date(values.expires);
      if (Number.isNaN(at.getTime())) throw new UsageError(`--expires: "${values.expires}" is not a date.`);
      patch.expires_at = at.toISOString();
    } else patch.expires_at = new Date(Date.now() + parseDuration(values.expires, '--expires')).toISOString();
  }
  if (values['max-downloads'] !== undefined) {
    const max = values['max-downloads'];
    if (max === 'unlimited') patch.max_downloads = null;
    else if (/^\d+$/.test(max) && Number(max) >= 1) patch.max_downloads = Number(max);
    else throw new UsageError('--max-downloads is a whole number from 1, or unlimited.');
  }
  const api = client(values);
  const route = `/distributions/${encodeURIComponent(id)}`;
  const distribution = Object.keys(patch).length > 0 ? await api.request('PATCH', route, { json: patch }) : await api.request('GET', route);
  if (values.json) {
    out(JSON.stringify(distribution, null, 2));
    return EXIT.ok;
  }
  out(`Install page: ${distribution.url}`);
  out(`Password:     ${distribution.password_protected ? 'yes' : 'no'}`);
  out(`Expires:      ${distribution.expires_at ?? 'never'}`);
  out(`Downloads:    ${distribution.downloads}${distribution.max_downloads === null ? '' : ` of ${distribution.max_downloads}`}`);
  out(`Enabled:      ${distribution.enabled ? 'yes' : 'no'}`);
  return EXIT.ok;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv);
  if (values.version) {
    out(VERSION);
    return EXIT.ok;
  }
  const [command, ...args] = positionals;
  if (values.help || command === undefined || command === 'help') {
    (command === undefined && !values.help ? info : out)(USAGE);
    return command === undefined && !values.help ? EXIT.usage : EXIT.ok;
  }
  switch (command) {
    case 'upload':
      return upload(args, values);
    case 'tasks':
      return tasks(args, values);
    case 'link':
      return link(args, values);
    default:
      throw new UsageError(`unknown command "${command}"; try signet-cli --help.`);
  }
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof CliError) {
    process.stderr.write(`signet-cli: ${error.code === 'usage' ? '' : `${error.code}: `}${error.message}\n`);
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`signet-cli: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = EXIT.unavailable;
  }
}
