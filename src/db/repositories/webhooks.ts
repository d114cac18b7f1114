// Webhook delivery attempts (one row per try, shown on the task) and Idempotency-Key records.
import type { Kysely } from 'kysely';
import { newId } from '../ids.ts';
import type { Database, IdempotencyKeyRow, WebhookDeliveryRow } from '../schema.ts';
import { nowIso } from './pagination.ts';

export interface WebhookDeliveryRepository {
  record(input: {
    taskId: string;
    accountId: string;
    event: string;
    url: string;
    attempt: number;
    outcome: 'delivered' | 'failed' | 'refused';
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  }): Promise<WebhookDeliveryRow>;
  /** Every attempt for the task, oldest first. */
  listForTask(taskId: string): Promise<WebhookDeliveryRow[]>;
  /** The deliveries of several tasks in one query (listings), by task id; tasks without any are absent. */
  listForTasks(taskIds: readonly string[]): Promise<Map<string, WebhookDeliveryRow[]>>;
}

export interface IdempotencyRepository {
  find(accountId: string, key: string): Promise<IdempotencyKeyRow | null>;
  /**
   * Records key → task unless the key already exists, and returns the row that holds the key
   * (the caller's own, or the earlier winner's: then roll back and answer with the winner's
   * task, or `idempotency_conflict` if its request_hash differs).
   */
  remember(input: { accountId: string; key: string; requestHash: string; taskId: string }): Promise<IdempotencyKeyRow>;
  /** Forgets keys older than `before`; returns how many. */
  purge(before: Date): Promise<number>;
}

export function webhookDeliveryRepository(db: Kysely<Database>): WebhookDeliveryRepository {
  return {
    async record(input) {
      const row: WebhookDeliveryRow = {
        id: newId('whd'),
        task_id: input.taskId,
        account_id: input.accountId,
        event: input.event,
        url: input.url,
        attempt: input.attempt,
        outcome: input.outcome,
        status_code: input.statusCode,
        // Response bodies and stack traces do not belong here; keep the stored reason short.
        error: input.error === null ? null : input.error.slice(0, 500),
        duration_ms: Math.max(0, Math.round(input.durationMs)),
        created_at: nowIso(),
      };
      await db.insertInto('webhook_deliveries').values(row).execute();
      return row;
    },
    listForTask: (taskId) =>
      db.selectFrom('webhook_deliveries').selectAll().where('task_id', '=', taskId).orderBy('created_at').orderBy('attempt').execute(),
    async listForTasks(taskIds) {
      const byTask = new Map<string, WebhookDeliveryRow[]>();
      if (taskIds.length === 0) return byTask;
      const rows = await db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('task_id', 'in', [...taskIds])
        .orderBy('created_at')
        .orderBy('attempt')
        .execute();
      for (const row of rows) byTask.set(row.task_id, [...(byTask.get(row.task_id) ?? []), row]);
      return byTask;
    },
  };
}

export function idempotencyRepository(db: Kysely<Database>): IdempotencyRepository {
  const find = async (accountId: string, key: string) =>
    (await db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst()) ??
    null;
  return {
    find,
    async remember({ accountId, key, requestHash, taskId }) {
      // ON CONFLICT DO NOTHING instead of catching a unique violation: on PostgreSQL a failed
      // statement would poison the caller's transaction.
      await db
        .insertInto('idempotency_keys')
        .values({ account_id: accountId, key, request_hash: requestHash, task_id: taskId, created_at: nowIso() })
        .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
        .execute();
      const holder = await find(accountId, key);
      if (holder === null) throw new Error(`idempotency key ${key} vanished right after insert`);
      return holder;
    },
    async purge(before) {
      const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', nowIso(before)).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
