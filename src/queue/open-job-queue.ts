// Picks the job queue for the database in use: the embedded table queue on SQLite,
// graphile-worker on PostgreSQL.
import type { Db } from '../db/database.ts';
import type { JobQueue, QueueTuning } from './job-queue.ts';
import { TableJobQueue } from './table-job-queue.ts';

export type { QueueTuning } from './job-queue.ts';

/**
 * The queue for `db`: TableJobQueue on SQLite; GraphileJobQueue on PostgreSQL (`databaseUrl` is
 * the same URL the database was opened with; graphile-worker keeps its own pool and schema).
 */
export async function openJobQueue(db: Db, databaseUrl: string | null, tuning: QueueTuning = {}): Promise<JobQueue> {
  if (db.dialect === 'postgres') {
    if (databaseUrl === null) throw new Error('a PostgreSQL database needs its URL for graphile-worker');
    // graphile-worker and pg load only for PostgreSQL deployments.
    const { GraphileJobQueue } = await import('./graphile-job-queue.ts');
    return GraphileJobQueue.open({ connectionString: databaseUrl, ...tuning });
  }
  return new TableJobQueue(db.kysely, db.dialect, tuning);
}
