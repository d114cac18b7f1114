// A throw-away PostgreSQL database per test file: created in the local server
// (127.0.0.1:5432, user postgres, trust auth; override with SIGNET_TEST_POSTGRES_URL) and dropped
// afterwards. An unreachable server FAILS the tests with a clear message rather than skipping
// them: CI has PostgreSQL, and silently skipped Postgres tests would hide dialect bugs.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ADMIN_URL = process.env.SIGNET_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestPostgres {
  /** Connection URL of the fresh, empty database. */
  url: string;
  /** Drops the database (terminating leftover connections). */
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (cause) {
    throw new Error(
      `PostgreSQL is unreachable at ${ADMIN_URL.replace(/\/\/[^@]*@/, '//…@')}: the PostgreSQL contract tests need a ` +
        'running server (trust auth for user postgres). Start it, or point SIGNET_TEST_POSTGRES_URL at one.',
      { cause },
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestPostgres(): Promise<TestPostgres> {
  const name = `signet_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((client) => dropWhenIdle(client, name)),
  };
}

/**
 * pg's `Pool.end()` resolves once its clients are told to end, before their connections close. A
 * forced drop at that moment terminates those backends, and the FATAL "terminating connection due
 * to administrator command" reaches a client that is still closing: an uncaught 'error' in the test
 * process after its tests passed. So the drop first waits (up to 5 s) for the database's
 * connections to close on their own, and forces only what is left.
 */
async function dropWhenIdle(client: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
    if (rows[0]!.n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await client.query(`drop database if exists ${name} with (force)`);
}
