// Account events and the account webhooks that receive them. An event is stored (the console's
// recent alerts) and, in the same transaction, one deliver_event job is queued per enabled
// webhook subscribed to its type; delivery (WebhookService.deliverEvent) signs and retries it
// like a task callback. Emitters call emit() only on a change of state they alone recorded
// (compare-and-set writes), so each change is sent once.
import type { Db } from '../db/database.ts';
import type { AccountEventRow, AccountWebhookDeliveryRow, AccountWebhookRow } from '../db/lifecycle-tables.ts';
import type { Repositories } from '../db/repositories.ts';
import { AppError } from '../errors.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { OutboundAllowList, validateOutboundUrl, type OutboundOptions } from './outbound.ts';
import type { Principal } from './principal.ts';
import { WEBHOOK_MAX_ATTEMPTS } from './webhooks.ts';

export const ACCOUNT_EVENT_TYPES = [
  'certificate.expiring',
  'certificate.expired',
  'certificate.revoked',
  'developer_account.unhealthy',
  'task.succeeded',
  'task.failed',
  'distribution.quota_reached',
] as const;
export type AccountEventType = (typeof ACCOUNT_EVENT_TYPES)[number];

/** What the console lists as alerts: everything but successes. */
export const ALERT_EVENT_TYPES: readonly AccountEventType[] = ACCOUNT_EVENT_TYPES.filter((t) => t !== 'task.succeeded');

const MAX_WEBHOOKS_PER_ACCOUNT = 20;

export interface AccountWebhookView {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface AccountEventView {
  id: string;
  type: string;
  subject_id: string;
  data: unknown;
  created_at: string;
}

export interface AccountWebhookDeliveryView {
  id: string;
  event_id: string;
  event: string;
  url: string;
  attempt: number;
  outcome: AccountWebhookDeliveryRow['outcome'];
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

export function accountWebhookView(row: AccountWebhookRow): AccountWebhookView {
  return { id: row.id, url: row.url, events: JSON.parse(row.events_json) as string[], enabled: row.state === 'enabled', description: row.description, created_at: row.created_at, updated_at: row.updated_at };
}

export function accountEventView(row: AccountEventRow): AccountEventView {
  return { id: row.id, type: row.type, subject_id: row.subject_id, data: JSON.parse(row.data_json) as unknown, created_at: row.created_at };
}

function deliveryView(row: AccountWebhookDeliveryRow): AccountWebhookDeliveryView {
  return { id: row.id, event_id: row.event_id, event: row.event, url: row.url, attempt: row.attempt, outcome: row.outcome, status_code: row.status_code, error: row.error, duration_ms: row.duration_ms, created_at: row.created_at };
}

export interface AccountEventServiceOptions {
  db: Db;
  queue: JobQueue;
  outbound?: OutboundOptions;
}

export interface WebhookInput {
  url?: string;
  events?: string[];
  enabled?: boolean;
  description?: string | null;
}

type Tx = { kysely: Kysely<Database>; repos: Repositories };

export class AccountEventService {
  private readonly options: AccountEventServiceOptions;

  constructor(options: AccountEventServiceOptions) {
    this.options = options;
  }

  /** Stores the event and queues its deliveries, inside `tx` when given (committed with the change). */
  async emit(event: { accountId: string; type: AccountEventType; subjectId: string; data: unknown }, tx?: Tx): Promise<AccountEventRow> {
    const run = async (t: Tx) => {
      const row = await t.repos.accountWebhooks.addEvent(event);
      for (const hook of await t.repos.accountWebhooks.subscribed(event.accountId, event.type)) {
        await this.options.queue.enqueue('deliver_event', { webhookId: hook.id, eventId: row.id }, { transaction: t.kysely, maxAttempts: WEBHOOK_MAX_ATTEMPTS });
      }
      return row;
    };
    return tx ? run(tx) : this.options.db.transaction(run);
  }

  async create(principal: Principal, input: WebhookInput): Promise<AccountWebhookView> {
    if (input.url === undefined) throw new AppError('invalid_request', 'url is required.', { details: { field: 'url' } });
    const repo = this.options.db.repos.accountWebhooks;
    if ((await repo.list(principal.accountId)).length >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new AppError('invalid_request', `An account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first.`, { details: { field: 'url' } });
    }
    const row = await repo.create({
      accountId: principal.accountId,
      url: this.checkUrl(input.url),
      events: this.checkEvents(input.events ?? [...ACCOUNT_EVENT_TYPES]),
      enabled: input.enabled ?? true,
      description: input.description ?? null,
    });
    return accountWebhookView(row);
  }

  async list(principal: Principal): Promise<AccountWebhookView[]> {
    return (await this.options.db.repos.accountWebhooks.list(principal.accountId)).map(accountWebhookView);
  }

  async get(principal: Principal, id: string): Promise<AccountWebhookView> {
    return accountWebhookView(await this.find(principal, id));
  }

  async update(principal: Principal, id: string, input: WebhookInput): Promise<AccountWebhookView> {
    await this.find(principal, id);
    const patch: { url?: string; events?: readonly string[]; enabled?: boolean; description?: string | null } = {};
    if (input.url !== undefined) patch.url = this.checkUrl(input.url);
    if (input.events !== undefined) patch.events = this.checkEvents(input.events);
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    if (input.description !== undefined) patch.description = input.description;
    const row = await this.options.db.repos.accountWebhooks.update(principal.accountId, id, patch);
    if (!row) throw new AppError('webhook_not_found', `No webhook ${id}.`);
    return accountWebhookView(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.options.db.repos.accountWebhooks.delete(principal.accountId, id))) throw new AppError('webhook_not_found', `No webhook ${id}.`);
  }

  async deliveries(principal: Principal, id: string, limit = 100): Promise<AccountWebhookDeliveryView[]> {
    const hook = await this.find(principal, id);
    return (await this.options.db.repos.accountWebhooks.listDeliveries(hook.id, limit)).map(deliveryView);
  }

  /** The account's recent events, newest first (`alerts`: without task successes). */
  async events(principal: Principal, options: { limit: number; types?: readonly string[] }): Promise<AccountEventView[]> {
    const types = options.types?.filter((t) => (ACCOUNT_EVENT_TYPES as readonly string[]).includes(t));
    if (options.types !== undefined && types?.length !== options.types.length) {
      throw new AppError('invalid_request', `type must be among ${ACCOUNT_EVENT_TYPES.join(', ')}.`, { details: { field: 'type' } });
    }
    return (await this.options.db.repos.accountWebhooks.listEvents(principal.accountId, { limit: options.limit, ...(types ? { types } : {}) })).map(accountEventView);
  }

  private async find(principal: Principal, id: string): Promise<AccountWebhookRow> {
    const row = await this.options.db.repos.accountWebhooks.find(principal.accountId, id);
    if (!row) throw new AppError('webhook_not_found', `No webhook ${id}.`);
    return row;
  }

  private checkUrl(url: string): string {
    return validateOutboundUrl(url, 'url', this.options.outbound ?? { allow: new OutboundAllowList('') }).href;
  }

  private checkEvents(events: readonly string[]): string[] {
    const unknown = events.filter((e) => !(ACCOUNT_EVENT_TYPES as readonly string[]).includes(e));
    if (unknown.length > 0) throw new AppError('invalid_request', `Unknown event type(s) ${unknown.join(', ')}; events are ${ACCOUNT_EVENT_TYPES.join(', ')}.`, { details: { field: 'events' } });
    if (events.length === 0) throw new AppError('invalid_request', 'events must name at least one event type.', { details: { field: 'events' } });
    return [...new Set(events)];
  }
}
