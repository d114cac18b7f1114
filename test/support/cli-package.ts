// The client package as a user gets it: `npm pack` of packages/cli (its prepare script compiles
// the TypeScript), installed from the tarball into an empty folder, run by a given Node binary.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './fixtures.ts';

const run = promisify(execFile);

export interface InstalledCli {
  dir: string;
  /** dist/main.js of the installed package. */
  main: string;
  tarball: string;
  remove(): Promise<void>;
}

export async function packAndInstallCli(): Promise<InstalledCli> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-cli-'));
  const packDir = path.join(dir, 'pack');
  const installDir = path.join(dir, 'install');
  await run('mkdir', ['-p', packDir, installDir]);
  const npm = { cwd: path.join(repoRoot, 'packages/cli'), env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }, maxBuffer: 16 * 1024 * 1024 };
  await run('npm', ['pack', '--pack-destination', packDir], npm);
  const tarball = path.join(packDir, (await readdir(packDir)).find((name) => name.endsWith('.tgz'))!);
  // An empty folder, as a CI job has: only the tarball and what it depends on.
  await writeFile(path.join(installDir, 'package.json'), '{"name":"cli-consumer","private":true}\n');
  await run('npm', ['install', '--prefer-offline', '--no-package-lock', tarball], { ...npm, cwd: installDir });
  return { dir: installDir, main: path.join(installDir, 'node_modules', 'signet-cli', 'dist', 'main.js'), tarball, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the installed CLI with `node` (a path), the given arguments and environment additions. */
export function runCli(node: string, main: string, args: string[], env: Record<string, string>, options: { cwd?: string; onStderr?: (text: string) => void } = {}): Promise<CliRun> & { kill(signal?: NodeJS.Signals): void } {
  const child = spawn(node, [main, ...args], { cwd: options.cwd ?? process.cwd(), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    options.onStderr?.(stderr);
  });
  const done = new Promise<CliRun>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))) as Promise<CliRun> & { kill(signal?: NodeJS.Signals): void };
  done.kill = (signal = 'SIGKILL') => child.kill(signal);
  return done;
}
