// The account's own settings, for its admins: API keys (label, scopes, expiry), members and
// their roles, invitations, the webhook secret and a test delivery, and the account itself.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import type { AccountDeletionService } from '../../services/account-deletion.ts';
import type { ApiKeyService } from '../../services/api-keys.ts';
import type { InvitationService } from '../../services/invitations.ts';
import type { UserService } from '../../services/users.ts';
import type { WebhookService } from '../../services/webhooks.ts';
import type { Db } from '../../db/database.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { Account, ApiKey, CreateApiKeyBody, CreatedApiKey, CreatedInvitation, Invitation, Member, Role, WebhookSecret, WebhookTest } from '../schemas/console.ts';
import { IdParam } from '../schemas/resources.ts';
import { invitationView, memberView } from '../views.ts';

export interface AccountRouteDeps {
  db: Db;
  apiKeys: ApiKeyService;
  users: UserService;
  invitations: InvitationService;
  webhooks: WebhookService;
  accountDeletion: AccountDeletionService;
}

const ADMIN = { scope: 'admin' } as const;
const READ = { scope: 'tasks:read' } as const;
const Items = <T extends Parameters<typeof Type.Array>[0]>(item: T) => envelope(Type.Object({ items: Type.Array(item) }, { additionalProperties: false }));
const Deleted = envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false }));

export function accountRoutes(app: FastifyInstance, deps: AccountRouteDeps): void {
  app.get(
    '/v1/account',
    { config: { scope: null }, schema: { tags: ['Account'], summary: 'The account this request acts on, and what the caller may do in it', response: responses(envelope(Account), []) } },
    async (request) => {
      const principal = principalOf(request);
      const account = await deps.db.repos.accounts.findById(principal.accountId);
      if (!account) throw new AppError('not_found', 'The account no longer exists.');
      return {
        code: 200,
        data: {
          id: account.id,
          name: account.name,
          created_at: account.created_at,
          credential: principal.user ? ('session' as const) : ('api_key' as const),
          role: principal.user?.role ?? null,
          scopes: [...principal.scopes],
        },
      };
    },
  );

  app.delete(
    '/v1/account',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['Account'],
        summary: 'Delete the account with everything in it (owners only)',
        description:
          'Cancels running tasks, then deletes every app, upload, task, artifact, install link, certificate, developer account, API key, invitation and membership of the account. `confirm` must repeat the account name. Members keep their users and their other accounts.',
        body: Type.Object({ confirm: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: responses(envelope(Type.Object({ deleted: Type.Literal(true), blobs_deleted: Type.Integer() }, { additionalProperties: false })), ['owner_required', 'insufficient_scope', 'csrf_token_invalid']),
      },
    },
    async (request) => {
      const result = await deps.accountDeletion.delete(principalOf(request), (request.body as { confirm: string }).confirm);
      return { code: 200, data: { deleted: true as const, blobs_deleted: result.blobsDeleted } };
    },
  );

  // API keys
  app.get('/v1/api-keys', { config: ADMIN, schema: { tags: ['API keys'], summary: "List the account's API keys (never the keys themselves)", response: responses(Items(ApiKey), ['insufficient_scope']) } }, async (request) => ({
    code: 200,
    data: { items: (await deps.apiKeys.listFor(principalOf(request))).map(({ account: _account, ...key }) => key) },
  }));

  app.post(
    '/v1/api-keys',
    {
      config: ADMIN,
      schema: {
        tags: ['API keys'],
        summary: 'Create an API key',
        description: 'The key is in this response only; Signet keeps its SHA-256. A key never gets a scope its creator lacks.',
        body: CreateApiKeyBody,
        response: responses(envelope(CreatedApiKey), ['insufficient_scope', 'csrf_token_invalid']),
      },
    },
    async (request) => {
      const body = request.body as { label?: string; scopes: string[]; expires_at?: string | null };
      const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
      if (expiresAt !== null && Number.isNaN(expiresAt.getTime())) throw new AppError('invalid_request', 'expires_at must be an ISO 8601 date-time', { details: { field: 'expires_at' } });
      const { key, info } = await deps.apiKeys.createFor(principalOf(request), { label: body.label?.trim() || null, scopes: body.scopes, expiresAt });
      const { account: _account, ...rest } = info;
      return { code: 200, data: { ...rest, key } };
    },
  );

  app.delete(
    '/v1/api-keys/:key_id',
    { config: ADMIN, schema: { tags: ['API keys'], summary: 'Revoke an API key', params: IdParam('key_id', '`key_…`'), response: responses(Deleted, ['api_key_not_found', 'insufficient_scope', 'csrf_token_invalid']) } },
    async (request) => {
      const { key_id } = request.params as { key_id: string };
      await deps.apiKeys.revokeFor(principalOf(request), key_id);
      return { code: 200, data: { id: key_id, deleted: true as const } };
    },
  );

  // Members
  app.get('/v1/members', { config: READ, schema: { tags: ['Members'], summary: 'List the members of the account', response: responses(Items(Member), []) } }, async (request) => ({
    code: 200,
    data: { items: (await deps.users.members(principalOf(request))).map(memberView) },
  }));

  const UserId = IdParam('user_id', '`usr_…`');
  app.patch(
    '/v1/members/:user_id',
    {
      config: ADMIN,
      schema: {
        tags: ['Members'],
        summary: "Change a member's role",
        description: 'Only owners make or unmake owners, nobody grants a role above their own, and the last owner stays an owner.',
        params: UserId,
        body: Type.Object({ role: Role }, { additionalProperties: false }),
        response: responses(envelope(Member), ['member_not_found', 'owner_required', 'last_owner', 'insufficient_scope', 'csrf_token_invalid']),
      },
    },
    async (request) => {
      const { user_id } = request.params as { user_id: string };
      return { code: 200, data: memberView(await deps.users.setRole(principalOf(request), user_id, (request.body as { role: string }).role)) };
    },
  );

  app.delete(
    '/v1/members/:user_id',
    {
      config: ADMIN,
      schema: {
        tags: ['Members'],
        summary: 'Remove a member from the account',
        params: UserId,
        response: responses(Deleted, ['member_not_found', 'owner_required', 'last_owner', 'insufficient_scope', 'csrf_token_invalid']),
      },
    },
    async (request) => {
      const { user_id } = request.params as { user_id: string };
      await deps.users.remove(principalOf(request), user_id);
      return { code: 200, data: { id: user_id, deleted: true as const } };
    },
  );

  app.post(
    '/v1/members/:user_id/password-reset',
    {
      config: ADMIN,
      schema: {
        tags: ['Members'],
        summary: "Make a one-time link that sets a member's password (owners only)",
        description: 'Hand the link to the member; it works once, for 24 hours, and ends their sessions when used.',
        params: UserId,
        response: responses(envelope(Type.Object({ url: Type.String(), expires_at: Type.String({ format: 'date-time' }) }, { additionalProperties: false })), [
          'member_not_found',
          'owner_required',
          'insufficient_scope',
          'csrf_token_invalid',
        ]),
      },
    },
    async (request) => {
      const { user_id } = request.params as { user_id: string };
      return { code: 200, data: await deps.users.resetLink(principalOf(request), user_id) };
    },
  );

  // Invitations
  app.get('/v1/invitations', { config: ADMIN, schema: { tags: ['Members'], summary: 'List open invitations', response: responses(Items(Invitation), ['insufficient_scope']) } }, async (request) => ({
    code: 200,
    data: { items: (await deps.invitations.list(principalOf(request))).map(invitationView) },
  }));

  app.post(
    '/v1/invitations',
    {
      config: ADMIN,
      schema: {
        tags: ['Members'],
        summary: 'Invite someone by link',
        description: 'Returns the link (shown only now) to hand to the invitee; it works once, for 7 days.',
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), role: Role }, { additionalProperties: false }),
        response: responses(envelope(CreatedInvitation), ['email_taken', 'owner_required', 'insufficient_scope', 'csrf_token_invalid']),
      },
    },
    async (request) => {
      const { invitation, url } = await deps.invitations.create(principalOf(request), request.body as { email: string; role: string });
      return { code: 200, data: { ...invitationView(invitation), url } };
    },
  );

  app.delete(
    '/v1/invitations/:invitation_id',
    {
      config: ADMIN,
      schema: { tags: ['Members'], summary: 'Revoke an invitation', params: IdParam('invitation_id', '`inv_…`'), response: responses(Deleted, ['invitation_not_found', 'insufficient_scope', 'csrf_token_invalid']) },
    },
    async (request) => {
      const { invitation_id } = request.params as { invitation_id: string };
      await deps.invitations.revoke(principalOf(request), invitation_id);
      return { code: 200, data: { id: invitation_id, deleted: true as const } };
    },
  );

  // Webhooks
  app.get(
    '/v1/webhooks/secret',
    { config: ADMIN, schema: { tags: ['Webhooks'], summary: 'The secret that signs webhook bodies (Signet-Signature)', response: responses(envelope(WebhookSecret), ['insufficient_scope']) } },
    async (request) => ({ code: 200, data: { secret: await deps.db.repos.accounts.webhookSecret(principalOf(request).accountId) } }),
  );

  app.post(
    '/v1/webhooks/secret/rotate',
    {
      config: ADMIN,
      schema: { tags: ['Webhooks'], summary: 'Replace the webhook secret', description: 'Deliveries from now on are signed with the new secret.', response: responses(envelope(WebhookSecret), ['insufficient_scope', 'csrf_token_invalid']) },
    },
    async (request) => ({ code: 200, data: { secret: await deps.db.repos.accounts.rotateWebhookSecret(principalOf(request).accountId) } }),
  );

  app.post(
    '/v1/webhooks/test',
    {
      config: ADMIN,
      schema: {
        tags: ['Webhooks'],
        summary: 'Send a signed test event (`ping`) to a URL',
        description: 'One attempt, no retries; the answer says what the receiver replied.',
        body: Type.Object({ url: Type.String({ pattern: '^https?://', maxLength: 2048 }) }, { additionalProperties: false }),
        response: responses(envelope(WebhookTest), ['insufficient_scope', 'csrf_token_invalid']),
      },
    },
    async (request) => {
      const sent = await deps.webhooks.sendTest(principalOf(request).accountId, (request.body as { url: string }).url);
      return { code: 200, data: { delivered: sent.delivered, status_code: sent.statusCode, error: sent.error, duration_ms: sent.durationMs } };
    },
  );
}
