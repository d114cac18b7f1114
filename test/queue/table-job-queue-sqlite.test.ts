import { describeJobQueueContract } from './job-queue.contract.ts';
import { tempDataDir } from './queue-backends.ts';

let remove: () => Promise<void> = async () => undefined;
describeJobQueueContract({
  name: 'the table queue (SQLite)',
  async prepare() {
    const temp = await tempDataDir();
    remove = temp.remove;
    return { implementation: 'table', dataDir: temp.dir, databaseUrl: null };
  },
  cleanup: () => remove(),
});
