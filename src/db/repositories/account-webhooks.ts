// Account webhooks, account events and their delivery attempts (migration 0011).
import type { Kysely } from 'kysely';
import type { AccountEventRow, AccountWebhookDeliveryRow, AccountWebhookRow } from '../lifecycle-tables.ts';
import { newId } from '../ids.ts';
import type { Database } from '../schema.ts';
import { nowIso } from './pagination.ts';

export interface AccountWebhookRepository {
  create(input: { accountId: string; url: string; events: readonly string[]; enabled: boolean; description: string | null }): Promise<AccountWebhookRow>;
  list(accountId: string): Promise<AccountWebhookRow[]>;
  find(accountId: string, id: string): Promise<AccountWebhookRow | null>;
  findById(id: string): Promise<AccountWebhookRow | null>;
  update(accountId: string, id: string, patch: { url?: string; events?: readonly string[]; enabled?: boolean; description?: string | null }): Promise<AccountWebhookRow | null>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** The account's enabled webhooks that receive `type`. */
  subscribed(accountId: string, type: string): Promise<AccountWebhookRow[]>;
  addEvent(input: { accountId: string; type: string; subjectId: string; data: unknown; at?: Date }): Promise<AccountEventRow>;
  findEvent(id: string): Promise<AccountEventRow | null>;
  /** Newest first; `types` narrows to some event types. */
  listEvents(accountId: string, options: { limit: number; types?: readonly string[] }): Promise<AccountEventRow[]>;
  recordDelivery(input: Omit<AccountWebhookDeliveryRow, 'id' | 'created_at'>): Promise<AccountWebhookDeliveryRow>;
  /** Newest first. */
  listDeliveries(webhookId: string, limit: number): Promise<AccountWebhookDeliveryRow[]>;
}

export function accountWebhookRepository(db: Kysely<Database>): AccountWebhookRepository {
  const find = async (accountId: string, id: string) =>
    (await db.selectFrom('account_webhooks').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()) ?? null;
  return {
    async create(input) {
      const now = nowIso();
      const row: AccountWebhookRow = {
        id: newId('whk'),
        account_id: input.accountId,
        url: input.url,
        events_json: JSON.stringify([...input.events]),
        state: input.enabled ? 'enabled' : 'disabled',
        description: input.description,
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('account_webhooks').values(row).execute();
      return row;
    },
    list: (accountId) => db.selectFrom('account_webhooks').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute(),
    find,
    async findById(id) {
      return (await db.selectFrom('account_webhooks').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },
    async update(accountId, id, patch) {
      const set: Partial<AccountWebhookRow> = { updated_at: nowIso() };
      if (patch.url !== undefined) set.url = patch.url;
      if (patch.events !== undefined) set.events_json = JSON.stringify([...patch.events]);
      if (patch.enabled !== undefined) set.state = patch.enabled ? 'enabled' : 'disabled';
      if (patch.description !== undefined) set.description = patch.description;
      await db.updateTable('account_webhooks').set(set).where('id', '=', id).where('account_id', '=', accountId).execute();
      return find(accountId, id);
    },
    async delete(accountId, id) {
      const result = await db.deleteFrom('account_webhooks').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async subscribed(accountId, type) {
      const rows = await db.selectFrom('account_webhooks').selectAll().where('account_id', '=', accountId).where('state', '=', 'enabled').execute();
      return rows.filter((row) => (JSON.parse(row.events_json) as string[]).includes(type));
    },
    async addEvent(input) {
      const row: AccountEventRow = {
        id: newId('evt'),
        account_id: input.accountId,
        type: input.type,
        subject_id: input.subjectId,
        data_json: JSON.stringify(input.data),
        created_at: nowIso(input.at),
      };
      await db.insertInto('account_events').values(row).execute();
      return row;
    },
    async findEvent(id) {
      return (await db.selectFrom('account_events').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },
    async listEvents(accountId, options) {
      let query = db.selectFrom('account_events').selectAll().where('account_id', '=', accountId);
      if (options.types !== undefined && options.types.length > 0) query = query.where('type', 'in', [...options.types]);
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
    },
    async recordDelivery(input) {
      const row: AccountWebhookDeliveryRow = { ...input, id: newId('whd'), error: input.error === null ? null : input.error.slice(0, 500), duration_ms: Math.max(0, Math.round(input.duration_ms)), created_at: nowIso() };
      await db.insertInto('account_webhook_deliveries').values(row).execute();
      return row;
    },
    listDeliveries: (webhookId, limit) =>
      db.selectFrom('account_webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('created_at', 'desc').orderBy('attempt', 'desc').limit(limit).execute(),
  };
}
