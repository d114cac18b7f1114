import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { openJobQueue } from '../../src/queue/open-job-queue.ts';
import { createTestPostgres } from '../support/postgres.ts';
import { MASTER_KEY, tempDataDir } from './queue-backends.ts';

test('openJobQueue picks the table queue on SQLite and graphile-worker on PostgreSQL', async () => {
  const temp = await tempDataDir();
  const postgres = await createTestPostgres();
  try {
    const sqlite = await openDatabase({ dataDir: temp.dir, databaseUrl: null, masterKey: MASTER_KEY });
    const embedded = await openJobQueue(sqlite, null);
    assert.equal(embedded.kind, 'table');
    await embedded.close();
    await sqlite.close();

    const pg = await openDatabase({ dataDir: temp.dir, databaseUrl: postgres.url, masterKey: MASTER_KEY });
    await assert.rejects(openJobQueue(pg, null), /needs its URL/);
    const scaled = await openJobQueue(pg, postgres.url);
    assert.equal(scaled.kind, 'graphile');
    await scaled.close();
    await pg.close();
  } finally {
    await postgres.drop();
    await temp.remove();
  }
});
