// API keys: format, storage as SHA-256 only, authentication, revocation, scopes and expiry.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { ApiKeyService } from '../../src/services/api-keys.ts';
import { SCOPES } from '../../src/services/scopes.ts';
import { freshDataDir } from '../support/server.ts';

let db: Db;
let keys: ApiKeyService;

before(async () => {
  db = await openDatabase(loadConfig({ SIGNET_DATA_DIR: freshDataDir('api-keys') }));
  keys = new ApiKeyService(db.repos);
});
after(() => db.close());

it('gives CLI-made keys every scope, and scoped keys only theirs', async () => {
  const all = await keys.create('default');
  assert.deepEqual([...(await keys.authenticate(all.key))!.scopes], [...SCOPES]);
  assert.deepEqual(all.info.scopes, [...SCOPES]);
  const scoped = await keys.create('default', 'uploader', { scopes: ['tasks:read', 'upload'] });
  assert.deepEqual(scoped.info.scopes, ['upload', 'tasks:read'], 'kept in catalogue order');
  assert.deepEqual([...(await keys.authenticate(scoped.key))!.scopes].sort(), ['tasks:read', 'upload']);
  await assert.rejects(keys.create('default', null, { scopes: ['root'] }), (error: any) => error.code === 'invalid_request');
  await assert.rejects(keys.create('default', null, { scopes: [] }), (error: any) => error.code === 'invalid_request');
});

it('refuses a key after its expiry', async () => {
  const soon = await keys.create('expiring', null, { expiresAt: new Date(Date.now() + 60_000) });
  assert.ok(await keys.authenticate(soon.key));
  await db.kysely.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', soon.info.id).execute();
  assert.equal(await keys.authenticate(soon.key), null);
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
