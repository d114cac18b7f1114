// API keys: format, storage as SHA-256 only, authentication, revocation, and the first-start
// bootstrap that creates exactly one key even when several processes start at once.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { freshDataDir } from '../support/server.ts';

let db: Db;
let keys: ApiKeyService;

before(async () => {
  db = await openDatabase(loadConfig({ SIGNET_DATA_DIR: freshDataDir('api-keys') }));
  keys = new ApiKeyService(db.repos);
});
after(() => db.close());

it('bootstraps one key for account "default", once, even when raced', async () => {
  const results = await Promise.all([keys.bootstrap(), keys.bootstrap(), keys.bootstrap()]);
  const created = results.filter((r) => r !== null);
  assert.equal(created.length, 1);
  assert.equal(created[0]!.info.account, 'default');
  assert.equal(await keys.bootstrap(), null);
  assert.equal((await keys.list('default')).length, 1);
});

it('creates sk_ keys of 256 random bits stored only as SHA-256', async () => {
  const { key, info } = await keys.create('acme', 'ci');
  assert.match(key, /^sk_[0-9A-Za-z]{43,}$/);
  assert.ok(key.startsWith(info.prefix));
  const row = await db.kysely.selectFrom('api_keys').selectAll().where('id', '=', info.id).executeTakeFirstOrThrow();
  assert.equal(row.key_hash, createHash('sha256').update(key).digest('hex'));
  assert.ok(!JSON.stringify(row).includes(key), 'the key itself is not stored');
  const second = await keys.create('acme');
  assert.notEqual(second.key, key);
});

it('authenticates live keys and refuses unknown, malformed and revoked ones', async () => {
  const { key, info } = await keys.create('bravo');
  const principal = await keys.authenticate(key);
  assert.equal(principal?.keyId, info.id);
  assert.equal(await keys.authenticate(`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`), null);
  assert.equal(await keys.authenticate('sk_short'), null);
  assert.equal(await keys.authenticate(''), null);
  assert.equal(await keys.revoke(info.id), true);
  assert.equal(await keys.authenticate(key), null);
  assert.equal(await keys.revoke(info.id), false);
  assert.equal(await keys.revoke('key_doesnotexist'), false);
  assert.ok((await keys.list('bravo'))[0]!.revoked_at);
});

it('refuses account names that are not plain tokens', async () => {
  await assert.rejects(keys.create('../etc'), (error: any) => error.code === 'invalid_request');
  await assert.rejects(keys.create(''), (error: any) => error.code === 'invalid_request');
  await assert.rejects(keys.list('nobody'), (error: any) => error.code === 'not_found');
});
