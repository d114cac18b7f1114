// Opens Signet's database: SQLite (better-sqlite3, WAL) in the data dir by default, PostgreSQL
// when SIGNET_DATABASE_URL is set. Both run the same kysely queries; the few places where the
// dialects differ read the capability flags in ./dialect.ts.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { createRepositories } from './create-repositories.ts';
import type { DialectName } from './dialect.ts';
import { migrateToLatest } from './migrator.ts';
import type { Repositories } from './repositories.ts';
import type { Database } from './schema.ts';
import { loadMasterKey, SecretBox } from './secret-box.ts';

export const SQLITE_FILE = 'signet.db';

export interface Db {
  readonly dialect: DialectName;
  readonly kysely: Kysely<Database>;
  readonly repos: Repositories;
  readonly secretBox: SecretBox;
  /**
   * Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws.
   * Use `tx.kysely` (e.g. as JobQueue EnqueueOptions.transaction) and `tx.repos` inside.
   * On SQLite transactions are serialised (one writer); keep them short and free of network I/O.
   * Inside `fn` use ONLY `tx` (never `db.repos`/`db.kysely`, nor a queue enqueue without
   * `transaction: tx.kysely`): SQLite has one connection, and a query on the outer handle waits
   * for the transaction to end, which waits for `fn`: a deadlock.
   */
  transaction<T>(fn: (tx: { kysely: Kysely<Database>; repos: Repositories }) => Promise<T>): Promise<T>;
  /** Closes the connection(s). */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
}

/** Opens the database named by the config (creating the data dir and master key as needed). */
export async function openDatabase(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'masterKey'>,
  options: OpenDatabaseOptions = {},
): Promise<Db> {
  const secretBox = new SecretBox(await loadMasterKey(config));
  const { kysely, dialect } = config.databaseUrl === null
    ? await openSqlite(config.dataDir)
    : await openPostgres(config.databaseUrl);
  try {
    if (options.migrate ?? true) await migrateToLatest(kysely, dialect);
  } catch (error) {
    await kysely.destroy();
    throw error;
  }
  return wrap(kysely, dialect, secretBox);
}

/** Wraps an already-open Kysely instance (tests, or callers that manage the connection). */
export function wrap(kysely: Kysely<Database>, dialect: DialectName, secretBox: SecretBox): Db {
  return {
    dialect,
    kysely,
    secretBox,
    repos: createRepositories(kysely, secretBox),
    transaction: (fn) =>
      kysely.transaction().execute((trx) => fn({ kysely: trx, repos: createRepositories(trx, secretBox) })),
    close: () => kysely.destroy(),
  };
}

async function openSqlite(dataDir: string): Promise<{ kysely: Kysely<Database>; dialect: DialectName }> {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, SQLITE_FILE);
  const sqlite = new BetterSqlite3(file);
  // The database holds API key hashes and sealed credentials: owner-only, whatever the umask.
  // SQLite gives the -wal and -shm files the main file's permissions.
  await fs.chmod(file, 0o600);
  // WAL lets readers (API requests) proceed while the worker writes; NORMAL is durable across
  // process crashes in WAL mode (only an OS crash can lose the last commits). busy_timeout covers
  // a second process (the CLI) writing at the same time.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return { kysely: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }), dialect: 'sqlite' };
}

/** int8 (sizes, count(*)) arrives from pg as a string; every int8 Signet stores is < 2^53. */
const INT8_OID = 20;

async function openPostgres(url: string): Promise<{ kysely: Kysely<Database>; dialect: DialectName }> {
  // pg loads only for PostgreSQL deployments; a SQLite server never pays for it.
  const { default: pgModule } = await import('pg');
  const pgTypes = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID && format !== 'binary'
        ? (value: string) => Number(value)
        : pgModule.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
  };
  // The parser is set per pool, not on the global pg.types, so other pg users in the process
  // (graphile-worker) keep their own conventions.
  const pool = new pgModule.Pool({ connectionString: url, types: pgTypes, max: 10 });
  // Without a listener, an idle client whose connection drops (server restart, admin
  // termination) raises an uncaught 'error' and kills the process. pg discards such clients; the
  // next query opens a fresh connection or fails with the real cause.
  pool.on('error', () => undefined);
  return { kysely: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres' };
}
