// How the queue contract opens each implementation, in the test process and in the child process
// that test/queue/crash-worker.ts runs (and kill -9s).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/database.ts';
import { GraphileJobQueue } from '../../src/queue/graphile-job-queue.ts';
import type { JobQueue } from '../../src/queue/job-queue.ts';
import type { QueueTuning } from '../../src/queue/open-job-queue.ts';
import { TableJobQueue } from '../../src/queue/table-job-queue.ts';

/** Everything needed to reach the same queue from another process. */
export interface QueueLocation {
  implementation: 'table' | 'graphile';
  dataDir: string;
  databaseUrl: string | null;
}

export const MASTER_KEY = '42'.repeat(32);

export async function openQueueAt(location: QueueLocation, tuning: QueueTuning): Promise<{ db: Db; queue: JobQueue }> {
  const db = await openDatabase({ dataDir: location.dataDir, databaseUrl: location.databaseUrl, masterKey: MASTER_KEY });
  if (location.implementation === 'graphile') {
    if (location.databaseUrl === null) throw new Error('graphile-worker needs PostgreSQL');
    return { db, queue: await GraphileJobQueue.open({ connectionString: location.databaseUrl, ...tuning }) };
  }
  return { db, queue: new TableJobQueue(db.kysely, db.dialect, tuning) };
}

export async function tempDataDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-queue-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Takes a running job's lease away behind its worker's back, as a sweep in another process would. */
export async function stealLease(location: QueueLocation, db: Db, jobId: string): Promise<void> {
  if (location.implementation === 'graphile') {
    await sql`delete from signet_job_leases where job_id = ${jobId}::bigint`.execute(db.kysely);
  } else {
    await db.kysely.updateTable('jobs').set({ lease_token: 'stolen' }).where('id', '=', jobId).execute();
  }
}
