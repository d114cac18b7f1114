// Schema migrations: append-only files in ./migrations named `NNNN-description.ts`, applied in
// name order by kysely's Migrator (which records them in kysely_migration and holds a lock so two
// processes starting together do not both migrate). A migration exports
// `up(db, dialect)`; the dialect argument is the one switch for DDL that differs.
// Migrations are never edited once committed: a change is a new file.
import { promises as fs } from 'node:fs';
import type { Kysely } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { DialectName } from './dialect.ts';

export interface SignetMigration {
  up(db: Kysely<any>, dialect: DialectName): Promise<void>;
}

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_FILE = /^\d{4}-[a-z0-9-]+\.ts$/;

class DirectoryMigrationProvider implements MigrationProvider {
  readonly #dialect: DialectName;

  constructor(dialect: DialectName) {
    this.#dialect = dialect;
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await fs.readdir(MIGRATIONS_DIR)).filter((name) => MIGRATION_FILE.test(name)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const module = (await import(new URL(file, MIGRATIONS_DIR).href)) as Partial<SignetMigration>;
      if (typeof module.up !== 'function') throw new Error(`migration ${file} does not export up(db, dialect)`);
      const up = module.up;
      migrations[file.replace(/\.ts$/, '')] = { up: (db) => up(db, this.#dialect) };
    }
    return migrations;
  }
}

/** Applies every pending migration; throws (with the failing migration's error as cause) if one fails. */
export async function migrateToLatest(db: Kysely<any>, dialect: DialectName): Promise<string[]> {
  // Numbers are handed out to parallel branches (0007 may land after 0009 was applied somewhere):
  // a missing earlier migration is applied rather than refused as corruption.
  const migrator = new Migrator({ db, provider: new DirectoryMigrationProvider(dialect), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined) {
    const which = failed === undefined ? 'database migration failed' : `database migration ${failed.migrationName} failed`;
    throw new Error(`${which}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
