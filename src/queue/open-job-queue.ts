// Picks the job queue for the database in use: the embedded table queue on SQLite,
// graphile-worker on PostgreSQL.
import type { Db } from '../db/database.ts';
import type { JobQueue } from './job-queue.ts';
import { TableJobQueue } from './table-job-queue.ts';

export interface QueueTuning {
  /** How long a claimed job stays leased without a heartbeat (default 30 s). */
  leaseMs?: number;
  /** Idle polling period for jobs enqueued by other processes (default 1 s; graphile also uses LISTEN/NOTIFY). */
  pollIntervalMs?: number;
}

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
