import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { createTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { describeRepositoryContract } from './repositories.contract.ts';

let postgres: TestPostgres | undefined;
let dataDir = '';
describeRepositoryContract({
  name: 'PostgreSQL',
  async open() {
    postgres = await createTestPostgres();
    dataDir = await mkdtemp(path.join(tmpdir(), 'signet-db-'));
    return openDatabase({ dataDir, databaseUrl: postgres.url, masterKey: '11'.repeat(32) });
  },
  async cleanup() {
    await postgres?.drop();
    await rm(dataDir, { recursive: true, force: true });
  },
});
