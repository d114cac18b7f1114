// `signet users create|reset-password|list` through ./bin/signet: a headless install makes its
// owner without the setup link, and the operator resets a password (ending that user's sessions).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, it } from 'node:test';
import { repoRoot } from '../support/fixtures.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';

const dataDir = freshDataDir('users-cli');
let server: ChildServer | null = null;
after(async () => {
  await server?.stop();
});

function signet(args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(path.join(repoRoot, 'bin/signet'), args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_DATA_DIR: dataDir },
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function signIn(url: string, email: string, password: string): Promise<Response> {
  return fetch(`${url}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
}

it('creates the owner headlessly, so no setup link is printed, and resets passwords', async () => {
  const created = signet(['users', 'create', '--email', 'Ops@Example.com', '--account', 'acme', '--password-stdin'], 'first-password-1\n');
  assert.equal(created.status, 0, created.stderr);
  assert.match(created.stdout, /Created ops@example\.com \(owner of "acme"\)/);
  assert.doesNotMatch(created.stdout, /first-password/);

  const generated = signet(['users', 'create', '--email', 'viewer@example.com', '--account', 'acme', '--role', 'viewer']);
  assert.equal(generated.status, 0, generated.stderr);
  const viewerPassword = generated.stdout.trim().split('\n').at(-1)!;
  assert.ok(viewerPassword.length >= 20, 'a generated password is printed once');

  const bad = signet(['users', 'create', '--email', 'x@example.com', '--account', 'acme', '--role', 'root']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /--role must be one of/);
  const short = signet(['users', 'create', '--email', 'y@example.com', '--account', 'acme', '--password-stdin'], 'short\n');
  assert.equal(short.status, 1);
  assert.match(short.stderr, /at least|10 to 200/);

  const listed = JSON.parse(signet(['users', 'list', '--json']).stdout);
  assert.deepEqual(listed.map((u: any) => [u.email, u.account, u.role]), [['ops@example.com', 'acme', 'owner'], ['viewer@example.com', 'acme', 'viewer']]);

  server = await spawnServer({ dataDir, env: { SIGNET_TEST_SIGNER: 'none' } });
  assert.equal(server.setupUrl, null, 'a user exists: no setup link');
  const first = await signIn(server.url, 'ops@example.com', 'first-password-1');
  assert.equal(first.status, 200);
  assert.equal((await first.json()).data.account.role, 'owner');
  assert.equal((await signIn(server.url, 'viewer@example.com', viewerPassword)).status, 200);
  const cookie = first.headers.getSetCookie()[0]!.split(';')[0]!;

  const reset = signet(['users', 'reset-password', '--email', 'ops@example.com', '--password-stdin'], 'second-password-2');
  assert.equal(reset.status, 0, reset.stderr);
  assert.match(reset.stdout, /sessions have ended/);
  const afterReset = await fetch(`${server.url}/v1/session`, { headers: { cookie } });
  assert.equal(afterReset.status, 401);
  assert.equal((await afterReset.json()).error, 'session_expired');
  const old = await signIn(server.url, 'ops@example.com', 'first-password-1');
  assert.equal(old.status, 401);
  assert.equal((await old.json()).error, 'credentials_invalid');
  assert.equal((await signIn(server.url, 'ops@example.com', 'second-password-2')).status, 200);
  const unknown = signet(['users', 'reset-password', '--email', 'nobody@example.com', '--password-stdin'], 'whatever-password');
  assert.equal(unknown.status, 1);
});
