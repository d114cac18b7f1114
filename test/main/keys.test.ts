// `signet keys create|list|revoke` against a data dir, through ./bin/signet, and the created
// key working (then failing once revoked) against a real server on the same data dir.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { repoRoot } from '../support/fixtures.ts';
import { freshDataDir, spawnServer, type ChildServer } from '../support/server.ts';

const dataDir = freshDataDir('keys-cli');
let server: ChildServer | null = null;
after(async () => {
  await server?.stop();
});

function signet(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(path.join(repoRoot, 'bin/signet'), args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_DATA_DIR: dataDir },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

it('creates, lists and revokes keys; stdout of create is only the key', async () => {
  const created = signet('keys', 'create', '--account', 'acme', '--label', 'ci');
  assert.equal(created.status, 0, created.stderr);
  assert.match(created.stdout, /^sk_[0-9A-Za-z]{43,}\n$/);
  const key = created.stdout.trim();

  const listed = signet('keys', 'list', '--account', 'acme', '--json');
  assert.equal(listed.status, 0, listed.stderr);
  const keys = JSON.parse(listed.stdout);
  assert.equal(keys.length, 1);
  assert.equal(keys[0].label, 'ci');
  assert.equal(keys[0].revoked_at, null);
  assert.ok(key.startsWith(keys[0].prefix));
  assert.doesNotMatch(listed.stdout, new RegExp(key));
  const table = signet('keys', 'list', '--account', 'acme');
  assert.match(table.stdout, /^ID\s+PREFIX\s+LABEL/);

  server = await spawnServer({ dataDir, env: { SIGNET_TEST_SIGNER: 'none' } });
  assert.equal(server.key, null, 'an account exists, so no bootstrap key is printed');
  const api = new Api(server.url, key);
  assert.equal((await api.get('/v1/tasks')).status, 200);

  const revoked = signet('keys', 'revoke', keys[0].id);
  assert.equal(revoked.status, 0, revoked.stderr);
  assert.equal((await api.get('/v1/tasks')).status, 401);
  const again = signet('keys', 'revoke', keys[0].id);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /No active key/);
});

it('prints and rotates the webhook signing secret', () => {
  const first = signet('webhooks', 'secret', '--account', 'acme');
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /^whsec_[0-9A-Za-z]{32,}\n$/);
  assert.equal(signet('webhooks', 'secret', '--account', 'acme').stdout, first.stdout, 'stable until rotated');
  const rotated = signet('webhooks', 'secret', '--account', 'acme', '--rotate');
  assert.equal(rotated.status, 0, rotated.stderr);
  assert.match(rotated.stdout, /^whsec_/);
  assert.notEqual(rotated.stdout, first.stdout);
  const unknown = signet('webhooks', 'secret', '--account', 'nobody');
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /No account named "nobody"/);
});

it('refuses bad account names and unknown accounts with one line on stderr', () => {
  const bad = signet('keys', 'create', '--account', '../etc');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^signet: .*\(invalid_request\)\n$/);
  const unknown = signet('keys', 'list', '--account', 'nobody');
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /No account named "nobody"/);
  const missing = signet('keys', 'create');
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /--account/);
});
