// Webhooks: when a task with a callback_url ends, one deliver_webhook job per event POSTs
// `{event, data: task}` signed like Stripe's scheme: `Signet-Signature: t=<unix>,v1=<hex>` where
// v1 = HMAC-SHA256(account webhook secret, "<t>.<body>"). Receivers recompute it over the raw
// body and reject old timestamps (replay). One attempt per job run; a failed attempt throws, so
// the queue retries it with exponential backoff. Every attempt is recorded on the task.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { TaskRow, WebhookDeliveryRow } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { JobContext } from '../queue/job-queue.ts';
import { OutboundAllowList, OutboundRefused, postOutbound, type OutboundOptions } from './outbound.ts';
import type { TaskLinksView } from '../distribution/service.ts';

export type WebhookEvent = 'task.succeeded' | 'task.failed' | 'ping';
export const WEBHOOK_MAX_ATTEMPTS = 8;

/** The Signet-Signature header value for `body` sent at `timestamp` (unix seconds). */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/** Receiver-side check (used by tests and documented for users). */
export function verifyWebhookSignature(secret: string, header: string, body: string, toleranceSeconds = 300, now = Date.now()): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isSafeInteger(t) || typeof parts.v1 !== 'string' || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = webhookSignature(secret, t, body).split('v1=')[1] ?? '';
  return expected.length === parts.v1.length && timingSafeEqual(Buffer.from(expected), Buffer.from(parts.v1));
}

export interface WebhookServiceOptions {
  db: Db;
  /** The `data` of a task event: the task as the API shows it (src/http builds that view). */
  taskBody: (task: TaskRow, deliveries: readonly WebhookDeliveryRow[], links: TaskLinksView | null) => unknown;
  timeoutMs?: number;
  /** Which destinations may be called (default: public addresses only). */
  outbound?: OutboundOptions;
  /** Counts delivery outcomes (metrics). */
  onOutcome?: (outcome: 'delivered' | 'failed' | 'refused') => void;
  /**
   * A succeeded task's install links, publishing them if the worker has not yet (the webhook job
   * is committed with the task's end, before the link is published). A failure throws, so the
   * delivery is retried rather than sent without the links.
   */
  links?: (task: TaskRow) => Promise<TaskLinksView | null>;
}

export class WebhookService {
  private readonly options: WebhookServiceOptions;

  constructor(options: WebhookServiceOptions) {
    this.options = options;
  }

  /** The account's signing secret (`whsec_…`) receivers verify with; `rotate` replaces it first. */
  async secret(accountName: string, options: { rotate?: boolean } = {}): Promise<string> {
    const account = await this.options.db.repos.accounts.findByName(accountName);
    if (!account) throw new AppError('not_found', `No account named "${accountName}".`);
    return options.rotate ? this.options.db.repos.accounts.rotateWebhookSecret(account.id) : this.options.db.repos.accounts.webhookSecret(account.id);
  }

  /** One signed `ping` event to `url`, for the console's "send a test event"; never retried. */
  async sendTest(accountId: string, url: string): Promise<{ delivered: boolean; statusCode: number | null; error: string | null; durationMs: number }> {
    const body = JSON.stringify({ event: 'ping', data: { account_id: accountId, sent_at: new Date().toISOString() } });
    const secret = await this.options.db.repos.accounts.webhookSecret(accountId);
    const sent = await this.post(url, 'ping', body, secret, {}, AbortSignal.timeout(this.options.timeoutMs ?? 10_000));
    return { delivered: sent.error === null, statusCode: sent.statusCode, error: sent.error, durationMs: Math.round(sent.durationMs) };
  }

  /**
   * One signed POST through the outbound policy (a refused destination is never contacted).
   * Never throws: the outcome, the receiver's status and the error, if any, are returned.
   */
  private async post(url: string, event: string, body: string, secret: string, headers: Record<string, string>, signal: AbortSignal): Promise<{ outcome: 'delivered' | 'failed' | 'refused'; statusCode: number | null; error: string | null; durationMs: number }> {
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let refused = false;
    try {
      const response = await postOutbound(
        url,
        {
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Signet-Webhook/1',
            'signet-signature': webhookSignature(secret, Math.floor(Date.now() / 1000), body),
            'signet-event': event,
            ...headers,
          },
          body,
          signal,
        },
        this.options.outbound ?? { allow: new OutboundAllowList('') },
      );
      statusCode = response.status;
      if (statusCode < 200 || statusCode > 299) error = `receiver answered HTTP ${statusCode}`;
    } catch (cause) {
      refused = cause instanceof OutboundRefused;
      error = refused ? `destination refused: ${(cause as Error).message}` : cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    }
    const outcome = refused ? 'refused' : error === null ? 'delivered' : 'failed';
    this.options.onOutcome?.(outcome);
    return { outcome, statusCode, error, durationMs: performance.now() - started };
  }

  /**
   * One attempt to deliver an account event to an account webhook (see account-events.ts); throws
   * (so the queue retries) unless the receiver answered 2xx. A webhook deleted or disabled since
   * the event is not called. Task events carry the task as it is now, like task callbacks.
   */
  async deliverEvent(payload: { webhookId: string; eventId: string }, context: JobContext): Promise<void> {
    const { db } = this.options;
    const [hook, event] = await Promise.all([db.repos.accountWebhooks.findById(payload.webhookId), db.repos.accountWebhooks.findEvent(payload.eventId)]);
    if (hook === null || event === null || hook.state !== 'enabled') return;
    let data = JSON.parse(event.data_json) as unknown;
    if (event.type.startsWith('task.')) {
      const task = await db.repos.tasks.find(null, event.subject_id);
      if (task) data = await this.taskData(task);
    }
    const body = JSON.stringify({ id: event.id, event: event.type, created_at: event.created_at, data });
    const secret = await db.repos.accounts.webhookSecret(hook.account_id);
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(this.options.timeoutMs ?? 10_000)]);
    const sent = await this.post(hook.url, event.type, body, secret, { 'signet-delivery-attempt': String(context.attempt), 'signet-event-id': event.id, 'signet-webhook-id': hook.id }, signal);
    await db.repos.accountWebhooks.recordDelivery({
      webhook_id: hook.id,
      event_id: event.id,
      account_id: hook.account_id,
      event: event.type,
      url: hook.url,
      attempt: context.attempt,
      outcome: sent.outcome,
      status_code: sent.statusCode,
      error: sent.error,
      duration_ms: sent.durationMs,
    });
    if (sent.outcome === 'refused') return;
    if (sent.error !== null) throw new AppError('webhook_failed', `Webhook ${event.type} to ${new URL(hook.url).origin} failed: ${sent.error}`);
  }

  /** The task as a webhook shows it now: its deliveries so far and, once it succeeded, its install links. */
  private async taskData(task: TaskRow): Promise<unknown> {
    const deliveries = await this.options.db.repos.webhookDeliveries.listForTask(task.id);
    const links = task.status === 'succeeded' && this.options.links ? await this.options.links(task) : null;
    return this.options.taskBody(task, deliveries, links);
  }

  /** One delivery attempt; throws (so the queue retries) unless the receiver answered 2xx. */
  async deliver(payload: { taskId: string; event: string }, context: JobContext): Promise<void> {
    const { db } = this.options;
    const task = await db.repos.tasks.find(null, payload.taskId);
    if (!task?.callback_url) return;
    const url = task.callback_url;
    const body = JSON.stringify({ event: payload.event, data: await this.taskData(task) });
    const secret = await db.repos.accounts.webhookSecret(task.account_id);
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(this.options.timeoutMs ?? 10_000)]);
    const { outcome, statusCode, error, durationMs } = await this.post(url, payload.event, body, secret, { 'signet-delivery-attempt': String(context.attempt) }, signal);
    await db.repos.webhookDeliveries.record({
      taskId: task.id,
      accountId: task.account_id,
      event: payload.event,
      url,
      attempt: context.attempt,
      outcome,
      statusCode,
      error,
      durationMs,
    });
    // A refused destination is final: retrying would only probe it again.
    if (outcome === 'refused') return;
    if (error !== null) throw new AppError('webhook_failed', `Webhook ${payload.event} to ${new URL(url).origin} failed: ${error}`);
  }
}
