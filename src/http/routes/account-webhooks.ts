// Account webhooks (/v1/webhooks): endpoints that receive the account's events, signed with the
// account's webhook secret (GET /v1/webhooks/secret), their delivery attempts, and the account's
// recent events (/v1/events, the console's alerts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ACCOUNT_EVENT_TYPES, ALERT_EVENT_TYPES, type AccountEventService } from '../../services/account-events.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, NullableString, responses, Timestamp } from '../schemas/common.ts';
import { IdParam } from '../schemas/resources.ts';

const ADMIN = { scope: 'admin' } as const;
const EventType = Type.Union(ACCOUNT_EVENT_TYPES.map((t) => Type.Literal(t)), {
  description:
    '`certificate.expiring` / `certificate.expired` / `certificate.revoked`: a certificate\'s health became that; `developer_account.unhealthy`: a developer account\'s certificate expired or was revoked, or Apple refused its key or wants agreements accepted; ' +
    '`task.succeeded` / `task.failed`: a task ended; `distribution.quota_reached`: an install link\'s download quota filled. Each is sent once per change of state.',
});

const Webhook = Type.Object(
  {
    id: Type.String({ description: '`whk_…`' }),
    url: Type.String(),
    events: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    description: NullableString(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
const Delivery = Type.Object(
  {
    id: Type.String(),
    event_id: Type.String(),
    event: Type.String(),
    url: Type.String(),
    attempt: Type.Integer(),
    outcome: Type.Union([Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('refused')]),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: NullableString(),
    duration_ms: Type.Integer(),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
const AccountEvent = Type.Object(
  { id: Type.String({ description: '`evt_…`' }), type: Type.String(), subject_id: Type.String(), data: Type.Unknown(), created_at: Timestamp },
  { additionalProperties: false },
);
const WebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL; private and loopback addresses need SIGNET_OUTBOUND_ALLOW.' }),
    events: Type.Optional(Type.Array(EventType, { minItems: 1, maxItems: 20, description: 'Default: every event type.' })),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Partial(WebhookBody, { additionalProperties: false });
const WebhookId = IdParam('webhook_id', '`whk_…`');

export function accountWebhookRoutes(app: FastifyInstance, events: AccountEventService): void {
  app.post(
    '/v1/webhooks',
    {
      config: ADMIN,
      schema: {
        tags: ['Webhooks'],
        summary: 'Add a webhook',
        description: 'Events are POSTed as `{id, event, created_at, data}`, signed like task callbacks (`Signet-Signature` with the account\'s webhook secret), and retried with backoff until the receiver answers 2xx.',
        body: WebhookBody,
        response: responses(envelope(Webhook), ['insufficient_scope']),
      },
    },
    async (request) => ({ code: 200, data: await events.create(principalOf(request), request.body as { url: string }) }),
  );

  app.get('/v1/webhooks', { schema: { tags: ['Webhooks'], summary: 'List webhooks', response: responses(envelope(Type.Object({ items: Type.Array(Webhook) }, { additionalProperties: false })), []) } }, async (request) => ({
    code: 200,
    data: { items: await events.list(principalOf(request)) },
  }));

  app.get('/v1/webhooks/:webhook_id', { schema: { tags: ['Webhooks'], summary: 'Get a webhook', params: WebhookId, response: responses(envelope(Webhook), ['webhook_not_found']) } }, async (request) => ({
    code: 200,
    data: await events.get(principalOf(request), (request.params as { webhook_id: string }).webhook_id),
  }));

  app.patch(
    '/v1/webhooks/:webhook_id',
    { config: ADMIN, schema: { tags: ['Webhooks'], summary: 'Change a webhook\'s url, events, enabled or description', params: WebhookId, body: PatchBody, response: responses(envelope(Webhook), ['webhook_not_found', 'insufficient_scope']) } },
    async (request) => ({ code: 200, data: await events.update(principalOf(request), (request.params as { webhook_id: string }).webhook_id, request.body as object) }),
  );

  app.delete(
    '/v1/webhooks/:webhook_id',
    {
      config: ADMIN,
      schema: {
        tags: ['Webhooks'],
        summary: 'Delete a webhook',
        description: 'Pending deliveries to it are dropped.',
        params: WebhookId,
        response: responses(envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false })), ['webhook_not_found', 'insufficient_scope']),
      },
    },
    async (request) => {
      const { webhook_id } = request.params as { webhook_id: string };
      await events.delete(principalOf(request), webhook_id);
      return { code: 200, data: { id: webhook_id, deleted: true as const } };
    },
  );

  app.get(
    '/v1/webhooks/:webhook_id/deliveries',
    { schema: { tags: ['Webhooks'], summary: 'Delivery attempts, newest first (last 100)', params: WebhookId, response: responses(envelope(Type.Object({ items: Type.Array(Delivery) }, { additionalProperties: false })), ['webhook_not_found']) } },
    async (request) => ({ code: 200, data: { items: await events.deliveries(principalOf(request), (request.params as { webhook_id: string }).webhook_id) } }),
  );

  app.get(
    '/v1/events',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Recent events of the account, newest first',
        description: `\`alerts=true\`: only what needs attention (${ALERT_EVENT_TYPES.join(', ')}).`,
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
            type: Type.Optional(EventType),
            alerts: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: responses(envelope(Type.Object({ items: Type.Array(AccountEvent) }, { additionalProperties: false })), []),
      },
    },
    async (request) => {
      const query = request.query as { limit?: number; type?: string; alerts?: boolean };
      const types = query.type !== undefined ? [query.type] : query.alerts ? ALERT_EVENT_TYPES : undefined;
      return { code: 200, data: { items: await events.events(principalOf(request), { limit: query.limit ?? 50, ...(types ? { types } : {}) }) } };
    },
  );
}
