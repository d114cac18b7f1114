// Migration 0007 (release notes) lands after 0008 and 0009 were applied on existing databases:
// the migrator applies the missing earlier migration instead of refusing the database as
// corrupted, and the notes columns exist afterwards. On SQLite.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { DialectName } from '../../src/db/dialect.ts';
import { migrateToLatest } from '../../src/db/migrator.ts';

const ALL = readdirSync(new URL('../../src/db/migrations/', import.meta.url)).filter((f) => /^\d{4}-.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();

it('applies 0007 on a database that already ran the later migrations', async () => {
  const kysely = new Kysely<any>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });
  try {
    const without = ALL.filter((name) => name !== '0007-release-notes');
    const migrations = Object.fromEntries(
      await Promise.all(
        without.map(async (name) => {
          const module = (await import(`../../src/db/migrations/${name}.ts`)) as { up(db: Kysely<any>, dialect: DialectName): Promise<void> };
          return [name, { up: (k: Kysely<any>) => module.up(k, 'sqlite') }] as const;
        }),
      ),
    );
    const { error } = await new Migrator({ db: kysely, provider: { getMigrations: async () => migrations } }).migrateToLatest();
    if (error) throw error;
    assert.ok(without.some((name) => name > '0007'), 'later migrations were applied first');
    assert.deepEqual(await migrateToLatest(kysely, 'sqlite'), ['0007-release-notes']);
    for (const table of ['uploads', 'tasks']) {
      const columns = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(kysely)).rows.map((r) => r.name);
      assert.ok(columns.includes('notes'), `${table}.notes`);
    }
  } finally {
    await kysely.destroy();
  }
});
