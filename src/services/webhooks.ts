// Webhooks: when a task with a callback_url ends, one deliver_webhook job per event POSTs
// `{event, data: task}` signed like Stripe's scheme: `Signet-Signature: t=<unix>,v1=<hex>` where
// v1 = HMAC-SHA256(account webhook secret, "<t>.<body>"). Receivers recompute it over the raw
// body and reject old timestamps (replay). One attempt per job run; a failed attempt throws, so
// the queue retries it with exponential backoff. Every attempt is recorded on the task.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { JobContext } from '../queue/job-queue.ts';
import { OutboundAllowList, OutboundRefused, postOutbound, type OutboundOptions } from './outbound.ts';
import { taskView } from './views.ts';

export type WebhookEvent = 'task.succeeded' | 'task.failed';
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
  baseUrl: string;
  timeoutMs?: number;
  /** Which destinations may be called (default: public addresses only). */
  outbound?: OutboundOptions;
  /** Counts delivery outcomes (metrics). */
  onOutcome?: (outcome: 'delivered' | 'failed' | 'refused') => void;
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

  /** One delivery attempt; throws (so the queue retries) unless the receiver answered 2xx. */
  async deliver(payload: { taskId: string; event: string }, context: JobContext): Promise<void> {
    const { db } = this.options;
    const task = await db.repos.tasks.find(null, payload.taskId);
    if (!task?.callback_url) return;
    const url = task.callback_url;
    const deliveries = await db.repos.webhookDeliveries.listForTask(task.id);
    const body = JSON.stringify({ event: payload.event, data: taskView(task, this.options.baseUrl, deliveries) });
    const secret = await db.repos.accounts.webhookSecret(task.account_id);
    const timestamp = Math.floor(Date.now() / 1000);
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
            'signet-signature': webhookSignature(secret, timestamp, body),
            'signet-event': payload.event,
            'signet-delivery-attempt': String(context.attempt),
          },
          body,
          signal: AbortSignal.any([context.signal, AbortSignal.timeout(this.options.timeoutMs ?? 10_000)]),
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
    await db.repos.webhookDeliveries.record({
      taskId: task.id,
      accountId: task.account_id,
      event: payload.event,
      url,
      attempt: context.attempt,
      outcome,
      statusCode,
      error,
      durationMs: performance.now() - started,
    });
    // A refused destination is final: retrying would only probe it again.
    if (refused) return;
    if (error !== null) throw new AppError('webhook_failed', `Webhook ${payload.event} to ${new URL(url).origin} failed: ${error}`);
  }
}
