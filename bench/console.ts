// `npm run bench:console`: the memory cost of serving the web console. Starts the service as
// tests do (production V8 flags) with and without the console, alternating, drives the same
// requests through each (every console page and asset, 20 times over, then API calls that
// authenticate with a console session), and prints both peak RSS figures (VmHWM) side by side.
// Target: the console adds at most 10 MB. The console streams its files from disk; nothing of
// the bundle is held in memory.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ConsoleClient } from '../test/support/console-client.ts';
import { repoRoot } from '../test/support/fixtures.ts';
import { freshDataDir, spawnServer } from '../test/support/server.ts';

const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? 3);
const MB = 1024 * 1024;
const dist = path.join(repoRoot, 'console', 'dist');
const assets = readdirSync(path.join(dist, 'assets')).map((f) => `/assets/${f}`);
const pages = ['/', '/sign-in', '/apps', '/apps/app_x', '/tasks', '/settings/developer', '/members', '/links'];

async function run(withConsole: boolean): Promise<number> {
  const server = await spawnServer({ dataDir: freshDataDir('bench-console'), env: { SIGNET_TEST_SIGNER: 'none', SIGNET_LOG_LEVEL: 'warn', ...(withConsole ? {} : { SIGNET_TEST_NO_CONSOLE: '1' }) } });
  try {
    for (let i = 0; i < 20; i += 1) {
      await Promise.all([...pages, ...assets].map(async (url) => (await fetch(`${server.url}${url}`)).arrayBuffer()));
    }
    const user = new ConsoleClient(server.url);
    await user.setup(server.setupUrl!, 'bench@example.com', 'bench-password-1');
    for (let i = 0; i < 50; i += 1) {
      await Promise.all([user.get('/v1/session'), user.get('/v1/apps'), user.get('/v1/tasks'), user.get('/v1/members'), user.get('/v1/api-keys')]);
    }
    await user.post('/v1/api-keys', { scopes: ['upload'] });
    return server.peakRss();
  } finally {
    await server.stop();
  }
}

const results: Record<'with' | 'without', number[]> = { with: [], without: [] };
for (let round = 0; round < rounds; round += 1) {
  results.without.push(await run(false));
  results.with.push(await run(true));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const withMb = median(results.with) / MB;
const withoutMb = median(results.without) / MB;
console.log(`peak RSS, median of ${rounds} (MB)   without console: ${withoutMb.toFixed(1)}   with console: ${withMb.toFixed(1)}   delta: ${(withMb - withoutMb).toFixed(1)} (target <= 10)`);
console.log(`  rounds without: ${results.without.map((b) => (b / MB).toFixed(1)).join(', ')}   with: ${results.with.map((b) => (b / MB).toFixed(1)).join(', ')}`);
