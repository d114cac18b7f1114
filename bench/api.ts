// `npm run bench:api`: the API's request rate and tail latency under 50 concurrent connections,
// GET /v1/tasks/:id and POST /v1/tasks/create, against Signet (`bin/signet serve` exactly as
// `npm start` runs it, API only) and against a bare fastify answering the same routes from
// memory (bench/bare-api-server.ts), in the same run, alternating. Prints requests/s, p99 and
// the ratio Signet/bare for each route.
//   npm run bench:api [-- --duration=10 --rounds=2 --signet-dir=<another checkout to compare>]
// The limits that would throttle a load test are raised for the bench's own key: SIGNET_RATE_LIMIT
// and the pending-task quota (every POST creates a task that stays pending with no worker).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { tinyApk } from '../test/support/app-packages.ts';
import { repoRoot, testOutputDir } from '../test/support/fixtures.ts';
import { testPki } from '../test/support/pki.ts';
import { productionEnv, productionNodeFlags } from '../test/support/production-node.ts';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const duration = Number(arg('duration', '10'));
const rounds = Number(arg('rounds', '2'));
const signetDir = path.resolve(arg('signet-dir', repoRoot));
const CONNECTIONS = 50;

async function start(cwd: string, args: string[], env: Record<string, string>, ready: (line: string) => string | null): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      lines.push(line);
      const found = ready(line);
      if (found) resolve(found);
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', onLine);
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${lines.join('\n')}`)));
  });
  return { child, url, lines };
}

/** A port that was free a moment ago, chosen here so that the URL is known before the server is up. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const work = testOutputDir('bench-api');
rmSync(work, { recursive: true, force: true });
const dataDir = path.join(work, 'signet');
const port = await freePort();
const serverEnv = {
  ...productionEnv(),
  SIGNET_DATA_DIR: dataDir,
  SIGNET_PORT: String(port),
  SIGNET_HOST: '127.0.0.1',
  SIGNET_WORKER_CONCURRENCY: '0',
  SIGNET_LOG_LEVEL: 'warn',
  SIGNET_RATE_LIMIT: '1000000/s,1000000',
  SIGNET_QUOTA_PENDING_TASKS: '0',
};
// The bench's key, made as an operator would (the server makes none on its first start).
const key = execFileSync(process.execPath, [...productionNodeFlags(), 'bin/signet', 'keys', 'create', '--account', 'default', '--label', 'bench:api'], {
  cwd: signetDir,
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...serverEnv },
  encoding: 'utf8',
}).trim();
if (!/^sk_/.test(key)) throw new Error(`signet keys create printed no key: ${key}`);
const signet = await start(signetDir, [...productionNodeFlags(), 'bin/signet', 'serve'], serverEnv, (line) => (/listening on port/.test(line) ? `http://127.0.0.1:${port}` : null));
for (let i = 0; ; i += 1) {
  if ((await fetch(`${signet.url}/healthz`).then((r) => r.status, () => 0)) === 200) break;
  if (i > 300) throw new Error('signet did not come up');
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const bare = await start(repoRoot, ['bench/bare-api-server.ts'], {}, (line) => (line.startsWith('BARE_URL ') ? line.slice('BARE_URL '.length) : null));

// One certificate, one upload, one task: what the two routes work on.
const auth = { authorization: `Bearer ${key}` };
const pki = testPki();
const form = new FormData();
form.append('kind', 'android');
form.append('password', 'pw');
form.append('file', new Blob([new Uint8Array(pki.p12(pki.androidRsa, { password: 'pw' }))]), 'k.p12');
const certificate = await fetch(`${signet.url}/v1/certificates`, { method: 'POST', headers: auth, body: form });
if (certificate.status !== 200) throw new Error(`certificate: ${certificate.status} ${await certificate.text()}`);
const upload = new FormData();
upload.append('file', new Blob([new Uint8Array(tinyApk())]), 'bench.apk');
const fileKey = ((await (await fetch(`${signet.url}/v1/apps/upload`, { method: 'POST', headers: auth, body: upload })).json()) as { data: { file_key: string } }).data.file_key;
const createBody = JSON.stringify({ file_key: fileKey, cert_type: 'enterprise' });
const created = (await (await fetch(`${signet.url}/v1/tasks/create`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: createBody })).json()) as { data: { task_id: string } };
const taskId = created.data.task_id;

interface Result {
  rps: number;
  p99: number;
  errors: number;
}

async function load(url: string, method: 'GET' | 'POST', route: string): Promise<Result> {
  const result = await autocannon({
    url: `${url}${route}`,
    method,
    connections: CONNECTIONS,
    duration,
    headers: method === 'POST' ? { ...auth, 'content-type': 'application/json' } : auth,
    ...(method === 'POST' ? { body: createBody } : {}),
  });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

const cases = [
  { name: `GET /v1/tasks/:id`, method: 'GET' as const, route: `/v1/tasks/${taskId}` },
  { name: `POST /v1/tasks/create`, method: 'POST' as const, route: '/v1/tasks/create' },
];
const totals = new Map<string, { signet: Result[]; bare: Result[] }>();
for (let round = 0; round < rounds; round += 1) {
  for (const c of cases) {
    const entry = totals.get(c.name) ?? { signet: [], bare: [] };
    entry.signet.push(await load(signet.url, c.method, c.route));
    entry.bare.push(await load(bare.url, c.method, c.route));
    totals.set(c.name, entry);
  }
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
console.log(`bench:api — ${CONNECTIONS} connections, ${duration} s × ${rounds} rounds per route and server; load average ${loadavg()[0]!.toFixed(2)}`);
console.log(`signet: ${path.relative(repoRoot, signetDir) || '.'} (bin/signet serve, SQLite, API only, log level warn)`);
console.log('route                    | signet req/s | bare req/s | ratio | signet p99 | bare p99 | errors');
for (const [name, { signet: s, bare: b }] of totals) {
  const sr = mean(s.map((r) => r.rps));
  const br = mean(b.map((r) => r.rps));
  console.log(
    `${name.padEnd(24)} | ${sr.toFixed(0).padStart(12)} | ${br.toFixed(0).padStart(10)} | ${(sr / br).toFixed(2).padStart(5)} | ${`${Math.max(...s.map((r) => r.p99))} ms`.padStart(10)} | ${`${Math.max(...b.map((r) => r.p99))} ms`.padStart(8)} | ${s.reduce((n, r) => n + r.errors, 0)}`,
  );
}
signet.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
