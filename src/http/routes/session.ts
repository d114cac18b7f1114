// The console's sign-in side: first-run setup, sign-in and sign-out, the session itself (who is
// signed in, which account, the CSRF token), password change and reset, and accepting an
// invitation. Sign-in, setup and invitation acceptance are throttled per address and per email
// with @fastify/rate-limit: guessing passwords gets slow long before it gets anywhere.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../db/user-tables.ts';
import { AppError } from '../../errors.ts';
import type { InvitationService } from '../../services/invitations.ts';
import { ROLE_SCOPES } from '../../services/scopes.ts';
import type { ConsoleSession, SessionService } from '../../services/sessions.ts';
import type { SetupService } from '../../services/setup.ts';
import type { UserService } from '../../services/users.ts';
import { clearSessionCookie, consoleSessionOf, setSessionCookie } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { Credentials, InvitationLookup, PasswordChange, PasswordReset, Session, SetupBody, SetupStatus } from '../schemas/console.ts';
import { invitationLookupView } from '../views.ts';

export interface SignInLimits {
  /** Attempts per client address per window. */
  perAddress: { max: number; windowSeconds: number };
  /** Attempts per email per window. */
  perEmail: { max: number; windowSeconds: number };
}

export interface SessionRouteDeps {
  sessions: SessionService;
  users: UserService;
  setup: SetupService;
  invitations: InvitationService;
  limits: SignInLimits;
  secureCookies: boolean;
}

const TAGS = ['Console session'];
const PUBLIC = { public: true } as const;
const SESSION_ONLY = { sessionOnly: true } as const;
const Ok = (name: string) => envelope(Type.Object({ [name]: Type.Literal(true) }, { additionalProperties: false }));

function sessionView(sessions: SessionService, context: ConsoleSession, token: string, accounts: Awaited<ReturnType<SessionService['memberships']>>) {
  return {
    user: { id: context.user.id, email: context.user.email, name: context.user.name },
    account: context.account,
    accounts: accounts.map((m) => ({ id: m.account_id, name: m.account_name, role: m.role })),
    scopes: context.account ? [...ROLE_SCOPES[context.account.role]] : [],
    csrf_token: sessions.csrfToken(token),
    expires_at: context.session.expires_at,
    idle_timeout_seconds: sessions.settings.idleTimeoutSeconds,
  };
}

export function sessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const { sessions } = deps;
  // createRateLimit rather than rateLimit(): the plugin's ready-made hooks run once per request,
  // and sign-in needs two limits (address and email) on the same request.
  const limiter = (options: { max: number; windowSeconds: number }, key: (request: FastifyRequest) => string) => {
    const check = app.createRateLimit({ max: options.max, timeWindow: options.windowSeconds * 1000, keyGenerator: key });
    return async (request: FastifyRequest) => {
      const result = await check(request);
      if (!result.isAllowed && result.isExceeded) throw new AppError('sign_in_throttled', undefined, { details: { retryAfterSeconds: result.ttl / 1000 } });
    };
  };
  const perAddress = limiter(deps.limits.perAddress, (request) => `sign-in:${request.ip}`);
  const perEmail = limiter(deps.limits.perEmail, (request) => `sign-in-email:${String((request.body as { email?: unknown } | undefined)?.email ?? '').trim().toLowerCase()}`);

  /** Starts a session for `user`, sets the cookie and answers with the session. */
  const begin = async (request: FastifyRequest, reply: FastifyReply, user: UserRow, accountId?: string) => {
    const { token } = await sessions.start(user, { remote: request.ip, userAgent: request.headers['user-agent'] ?? null, ...(accountId ? { accountId } : {}) });
    const found = await sessions.authenticate(token);
    if (found.status !== 'ok') throw new AppError('internal_error', 'a new session did not authenticate');
    setSessionCookie(reply, token, sessions.settings.maxAgeSeconds, deps.secureCookies);
    return { code: 200 as const, data: sessionView(sessions, found.value, token, await sessions.memberships(user.id)) };
  };

  app.get(
    '/v1/setup',
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'Whether first-run setup is open, and whether this setup token is valid',
        querystring: Type.Object({ token: Type.String({ maxLength: 100 }) }),
        response: responses(envelope(SetupStatus), [], { authenticated: false }),
      },
    },
    async (request) => {
      const status = await deps.setup.status((request.query as { token: string }).token);
      return { code: 200, data: { needed: status.needed, token_valid: status.tokenValid, existing_accounts: status.existingAccounts } };
    },
  );

  app.post(
    '/v1/setup',
    {
      config: PUBLIC,
      onRequest: perAddress,
      schema: {
        tags: TAGS,
        summary: 'Create the first owner with the one-time setup link printed on the first start',
        description: 'Signs the new owner in (sets the session cookie). Accounts made before users existed become theirs; otherwise `account_name` (default `default`) is created.',
        body: SetupBody,
        response: responses(envelope(Session), ['setup_token_invalid', 'email_taken', 'sign_in_throttled'], { authenticated: false }),
      },
    },
    async (request, reply) => {
      const body = request.body as { token: string; email: string; password: string; name?: string; account_name?: string };
      const user = await deps.setup.complete(body.token, { email: body.email, password: body.password, accountName: body.account_name ?? 'default', name: body.name ?? null });
      return begin(request, reply, user);
    },
  );

  app.post(
    '/v1/auth/sign-in',
    {
      config: PUBLIC,
      onRequest: perAddress,
      preHandler: perEmail,
      schema: {
        tags: TAGS,
        summary: 'Sign in to the console with email and password',
        description: 'Sets the HttpOnly session cookie and returns the session with its CSRF token. Attempts are limited per address and per email.',
        body: Type.Object({ ...Credentials.properties, account_id: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false }),
        response: responses(envelope(Session), ['credentials_invalid', 'sign_in_throttled'], { authenticated: false }),
      },
    },
    async (request, reply) => {
      const body = request.body as { email: string; password: string; account_id?: string };
      const user = await sessions.verifyCredentials(body.email, body.password);
      return begin(request, reply, user, body.account_id);
    },
  );

  app.get(
    '/v1/session',
    { config: SESSION_ONLY, schema: { tags: TAGS, summary: 'The signed-in user, their accounts and the CSRF token', response: responses(envelope(Session), ['session_expired']) } },
    async (request) => {
      const context = consoleSessionOf(request);
      return { code: 200, data: sessionView(sessions, context, context.token, await sessions.memberships(context.user.id)) };
    },
  );

  app.put(
    '/v1/session/account',
    {
      config: SESSION_ONLY,
      schema: {
        tags: TAGS,
        summary: 'Switch the account the console acts on',
        body: Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
        response: responses(envelope(Session), ['session_expired', 'csrf_token_invalid', 'not_found']),
      },
    },
    async (request) => {
      const context = consoleSessionOf(request);
      await sessions.switchAccount(context, (request.body as { account_id: string }).account_id);
      const found = await sessions.authenticate(context.token);
      if (found.status !== 'ok') throw new AppError('session_expired');
      return { code: 200, data: sessionView(sessions, found.value, context.token, await sessions.memberships(context.user.id)) };
    },
  );

  app.post(
    '/v1/auth/sign-out',
    { config: SESSION_ONLY, schema: { tags: TAGS, summary: 'Sign out (ends this session)', response: responses(Ok('signed_out'), ['session_expired', 'csrf_token_invalid']) } },
    async (request, reply) => {
      await sessions.signOut(consoleSessionOf(request).session.id);
      clearSessionCookie(reply, deps.secureCookies);
      return { code: 200, data: { signed_out: true as const } };
    },
  );

  app.post(
    '/v1/auth/sign-out-everywhere',
    {
      config: SESSION_ONLY,
      schema: {
        tags: TAGS,
        summary: 'Sign out everywhere (ends every session of this user)',
        response: responses(envelope(Type.Object({ sessions_ended: Type.Integer() }, { additionalProperties: false })), ['session_expired', 'csrf_token_invalid']),
      },
    },
    async (request, reply) => {
      const ended = await sessions.signOutEverywhere(consoleSessionOf(request).user.id);
      clearSessionCookie(reply, deps.secureCookies);
      return { code: 200, data: { sessions_ended: ended } };
    },
  );

  app.post(
    '/v1/auth/password',
    {
      config: SESSION_ONLY,
      schema: {
        tags: TAGS,
        summary: 'Change your password',
        description: 'Every other session of the user ends; this one stays signed in.',
        body: PasswordChange,
        response: responses(Ok('changed'), ['session_expired', 'csrf_token_invalid', 'current_password_incorrect']),
      },
    },
    async (request) => {
      const context = consoleSessionOf(request);
      const body = request.body as { current_password: string; new_password: string };
      await deps.users.changePassword(context.user.id, body.current_password, body.new_password, context.session.id);
      return { code: 200, data: { changed: true as const } };
    },
  );

  app.post(
    '/v1/auth/reset-password',
    {
      config: PUBLIC,
      onRequest: perAddress,
      schema: {
        tags: TAGS,
        summary: 'Set a new password with a reset link from an owner',
        description: 'Every session of the user ends; sign in with the new password.',
        body: PasswordReset,
        response: responses(Ok('reset'), ['password_reset_invalid', 'sign_in_throttled'], { authenticated: false }),
      },
    },
    async (request) => {
      const body = request.body as { token: string; password: string };
      await deps.users.resetWithToken(body.token, body.password);
      return { code: 200, data: { reset: true as const } };
    },
  );

  app.get(
    '/v1/invitations/lookup',
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'What an invitation link invites to',
        querystring: Type.Object({ token: Type.String({ maxLength: 100 }) }),
        response: responses(envelope(InvitationLookup), ['invitation_invalid'], { authenticated: false }),
      },
    },
    async (request) => ({ code: 200, data: invitationLookupView(await deps.invitations.lookup((request.query as { token: string }).token)) }),
  );

  app.post(
    '/v1/invitations/accept',
    {
      config: PUBLIC,
      onRequest: perAddress,
      schema: {
        tags: TAGS,
        summary: 'Accept an invitation and sign in',
        description: 'A new user chooses `password`; a person who already has a user gives theirs.',
        body: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 100 }), password: Type.String({ minLength: 1, maxLength: 200 }), name: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
        response: responses(envelope(Session), ['invitation_invalid', 'credentials_invalid', 'sign_in_throttled'], { authenticated: false }),
      },
    },
    async (request, reply) => {
      const body = request.body as { token: string; password: string; name?: string };
      const { user, accountId } = await deps.invitations.accept(body.token, { password: body.password, name: body.name ?? null });
      return begin(request, reply, user, accountId);
    },
  );
}
