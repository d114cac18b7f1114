import { createTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { describeJobQueueContract } from './job-queue.contract.ts';
import { tempDataDir } from './queue-backends.ts';

let postgres: TestPostgres | undefined;
let remove: () => Promise<void> = async () => undefined;
describeJobQueueContract({
  name: 'the table queue (PostgreSQL, SKIP LOCKED)',
  async prepare() {
    postgres = await createTestPostgres();
    const temp = await tempDataDir();
    remove = temp.remove;
    return { implementation: 'table', dataDir: temp.dir, databaseUrl: postgres.url };
  },
  async cleanup() {
    await postgres?.drop();
    await remove();
  },
});
