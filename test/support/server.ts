// Real listening Signet servers for tests: in-process (startService on an ephemeral port) or as
// a child process (test/support/serve-entry.ts) that a test can SIGKILL and restart on the same
// data dir. Each server gets its own data dir under test-output/.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../../src/config.ts';
import { startService, type RunningService, type ServiceOverrides } from '../../src/main/service.ts';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { repoRoot, testOutputDir } from './fixtures.ts';
import { productionNodeFlags } from './production-node.ts';

const created: string[] = [];
let cleanupRegistered = false;

/**
 * A new, empty data dir under test-output/service/, removed when the test process exits (the
 * big-upload tests leave gigabytes behind otherwise); SIGNET_TEST_KEEP=1 keeps them to look at.
 */
export function freshDataDir(name: string): string {
  const dir = testOutputDir('service', `${name}-${randomBytes(4).toString('hex')}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  created.push(dir);
  if (!cleanupRegistered && !process.env.SIGNET_TEST_KEEP) {
    cleanupRegistered = true;
    process.on('exit', () => {
      for (const d of created) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}

export interface TestServer {
  url: string;
  /** An API key (every scope) of account `default`, made like `signet keys create --account default`. */
  key: string;
  /** The one-time first-run link the server printed (`<url>/setup?token=…`). */
  setupUrl: string | null;
  dataDir: string;
  service: RunningService;
  close(): Promise<void>;
}

/** startService on 127.0.0.1:0 with a fresh data dir; logs off unless SIGNET_TEST_LOGS=1. */
export async function startTestServer(options: { env?: Record<string, string>; overrides?: ServiceOverrides; name?: string } = {}): Promise<TestServer> {
  const dataDir = freshDataDir(options.name ?? 'server');
  let setupUrl: string | null = null;
  const config = loadConfig({
    SIGNET_PORT: '0',
    SIGNET_HOST: '127.0.0.1',
    SIGNET_DATA_DIR: dataDir,
    SIGNET_LOG_LEVEL: process.env.SIGNET_TEST_LOGS ? 'debug' : 'silent',
    ...options.env,
  });
  const service = await startService(config, { onSetupLink: (url) => (setupUrl = url), ...options.overrides });
  const { key } = await new ApiKeyService(service.db.repos).create('default', 'test');
  return {
    url: service.url,
    key,
    setupUrl,
    dataDir,
    service,
    close: async () => {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ChildServer {
  url: string;
  /** An API key of account `default`, made on the first start of a data dir. */
  key: string | null;
  /** The first-run setup link, printed while no console user exists. */
  setupUrl: string | null;
  child: ChildProcess;
  /** Everything the child printed (JSON log lines and markers). */
  output: string[];
  /** Resolves with the exit code or signal. */
  exited: Promise<number | NodeJS.Signals | null>;
  /** Peak resident set size so far, in bytes (Linux /proc VmHWM). */
  peakRss(): number;
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

/** Runs test/support/serve-entry.ts in a child process on an ephemeral port. */
export async function spawnServer(options: { dataDir: string; env?: Record<string, string>; nodeArgs?: string[] }): Promise<ChildServer> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? productionNodeFlags()), path.join(repoRoot, 'test/support/serve-entry.ts')], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SIGNET_PORT: '0',
      SIGNET_HOST: '127.0.0.1',
      SIGNET_DATA_DIR: options.dataDir,
      SIGNET_LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let key: string | null = null;
  let setupUrl: string | null = null;
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      output.push(line);
      if (line.startsWith('SIGNET_BOOTSTRAP_KEY ')) key = line.slice('SIGNET_BOOTSTRAP_KEY '.length);
      if (line.startsWith('SIGNET_SETUP_URL ')) setupUrl = line.slice('SIGNET_SETUP_URL '.length);
      if (line.startsWith('SIGNET_URL ')) resolve(line.slice('SIGNET_URL '.length));
    });
    createInterface({ input: child.stderr! }).on('line', (line) => output.push(line));
    exited.then((status) => reject(new Error(`server exited (${String(status)}) before listening:\n${output.join('\n')}`)));
  });
  let peak = 0;
  const peakRss = () => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb * 1024);
    } catch {
      // the process is gone; keep the last reading
    }
    return peak;
  };
  return {
    url,
    key,
    setupUrl,
    child,
    output,
    exited,
    peakRss,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      peakRss();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
