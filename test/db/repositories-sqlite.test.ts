import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { describeRepositoryContract } from './repositories.contract.ts';

let dataDir = '';
describeRepositoryContract({
  name: 'SQLite',
  async open() {
    dataDir = await mkdtemp(path.join(tmpdir(), 'signet-db-'));
    return openDatabase({ dataDir, databaseUrl: null, masterKey: null });
  },
  cleanup: () => rm(dataDir, { recursive: true, force: true }),
});
