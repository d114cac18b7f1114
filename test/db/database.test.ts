import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { AppError } from '../../src/errors.ts';

describe('openDatabase (SQLite)', () => {
  const dirs: string[] = [];
  const dataDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'signet-open-'));
    dirs.push(dir);
    return dir;
  };
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  test('creates the database in WAL mode, migrates once and keeps data across reopen', async () => {
    const dir = await dataDir();
    const first = await openDatabase({ dataDir: dir, databaseUrl: null, masterKey: null });
    const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(first.kysely);
    assert.equal(rows[0]?.journal_mode, 'wal');
    assert.equal((await stat(path.join(dir, 'signet.db'))).mode & 0o777, 0o600, 'owner-only database file');
    const account = await first.repos.accounts.create('persisted');
    await first.close();
    const second = await openDatabase({ dataDir: dir, databaseUrl: null, masterKey: null });
    assert.equal((await second.repos.accounts.findByName('persisted'))?.id, account.id);
    const migrations = await second.kysely.selectFrom('kysely_migration' as never).select(sql<string>`name`.as('name')).execute();
    const names = migrations.map((m) => (m as { name: string }).name);
    assert.equal(new Set(names).size, names.length, 'each migration recorded once');
    assert.ok(names.includes('0001-initial'));
    // The key file written on first open decrypts what was sealed then.
    assert.match(await second.repos.accounts.webhookSecret(account.id), /^whsec_/);
    await second.close();
  });

  test('secrets sealed under one master key do not open under another', async () => {
    const dir = await dataDir();
    const sealedWithA = await openDatabase({ dataDir: dir, databaseUrl: null, masterKey: 'aa'.repeat(32) });
    const account = await sealedWithA.repos.accounts.create('keyed');
    await sealedWithA.close();
    const openedWithB = await openDatabase({ dataDir: dir, databaseUrl: null, masterKey: 'bb'.repeat(32) });
    await assert.rejects(openedWithB.repos.accounts.webhookSecret(account.id), (error: unknown) => error instanceof AppError && error.code === 'internal_error');
    await openedWithB.close();
  });

  test('an unreachable PostgreSQL fails fast instead of hanging', async () => {
    await assert.rejects(openDatabase({ dataDir: await dataDir(), databaseUrl: 'postgres://postgres@127.0.0.1:1/nothing', masterKey: 'cc'.repeat(32) }), /ECONNREFUSED|connect/);
  });
});
