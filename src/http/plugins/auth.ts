// Authentication, scopes and CSRF, as an onRequest hook (the per-credential rate limit follows as
// a route hook, src/http/limits.ts). A request authenticates with a Bearer API key, or with the
// console's session cookie; cookie requests that change state must also carry the session's CSRF
// token in X-CSRF-Token (a page on another site can make the browser send the cookie, but cannot
// read the token). Routes say what they
// need in their config: `public` (no credential), `sessionOnly` (a signed-in person: profile,
// password), and `scope`, which defaults to `tasks:read` for GET and HEAD and to `admin` for
// everything else, so a route that forgets to declare one is closed rather than open.
// Keys and cookies are never logged; the request log carries the credential's id.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Scope } from '../../db/user-tables.ts';
import { AppError } from '../../errors.ts';
import type { Principal } from '../../services/principal.ts';
import { requireScope } from '../../services/scopes.ts';
import type { ConsoleSession, SessionService } from '../../services/sessions.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** Set when the request authenticated with the console's session cookie. */
    consoleSession: ConsoleSession | null;
    /** The session cookie's token (for its CSRF token). */
    sessionToken: string | null;
  }
  interface FastifyContextConfig {
    public?: boolean;
    /** The scope the route needs (see above); null: any authenticated caller. */
    scope?: Scope | null;
    /** Only a signed-in console user (not an API key) may call it. */
    sessionOnly?: boolean;
    /** An HTML page (the console's): it gets the pages' security headers (security-headers.ts). */
    page?: boolean;
  }
}

export type Authenticate = (token: string) => Promise<Principal | null>;

export const SESSION_COOKIE = 'signet_session';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** How a route authenticates, for the OpenAPI document. */
export interface RouteAuth {
  public: boolean;
  sessionOnly: boolean;
  scope: Scope | null;
}

export function routeAuth(method: string, config: { public?: boolean; scope?: Scope | null; sessionOnly?: boolean }): RouteAuth {
  const scope = config.scope === undefined ? (SAFE_METHODS.has(method.toUpperCase()) ? 'tasks:read' : 'admin') : config.scope;
  return { public: config.public === true, sessionOnly: config.sessionOnly === true, scope: config.sessionOnly ? null : scope };
}

/** The principal of an authenticated route; throws if called on a public one (a wiring bug). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized');
  return request.principal;
}

/** The console session of a sessionOnly route. */
export function consoleSessionOf(request: FastifyRequest): ConsoleSession & { token: string } {
  if (!request.consoleSession || request.sessionToken === null) throw new AppError('unauthorized', 'This request needs a console session.');
  return { ...request.consoleSession, token: request.sessionToken };
}

export interface AuthDeps {
  authenticate: Authenticate;
  /** Console sessions; without them only API keys authenticate. */
  sessions?: SessionService | undefined;
  /** Sets `Secure` on the session cookie (the public URL is https). */
  secureCookies: boolean;
}

export function setSessionCookie(reply: FastifyReply, token: string, maxAgeSeconds: number, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: maxAgeSeconds });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}

export function installAuth(app: FastifyInstance, deps: AuthDeps): Map<string, RouteAuth> {
  const table = new Map<string, RouteAuth>();
  app.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) table.set(`${method} ${route.url}`, routeAuth(method, route.config ?? {}));
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('consoleSession', null);
  app.decorateRequest('sessionToken', null);

  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    if (config.public || !request.routeOptions.url) return;
    const auth = routeAuth(request.method, config);
    const header = request.headers.authorization;
    let principal: Principal | null;
    if (header !== undefined) {
      const match = typeof header === 'string' ? /^Bearer +(\S+)\s*$/i.exec(header) : null;
      if (!match?.[1]) throw new AppError('unauthorized', 'The Authorization header must be "Bearer sk_…".');
      principal = await deps.authenticate(match[1]);
      if (!principal) throw new AppError('unauthorized', 'The API key is unknown, revoked or expired.');
      if (auth.sessionOnly) throw new AppError('insufficient_scope', 'This request is for a signed-in console user, not an API key.');
    } else {
      const token = request.cookies?.[SESSION_COOKIE];
      if (!token || !deps.sessions) throw new AppError('unauthorized', 'Missing Authorization: Bearer header.');
      const found = await deps.sessions.authenticate(token);
      if (found.status !== 'ok') {
        clearSessionCookie(reply, deps.secureCookies);
        throw found.status === 'expired' ? new AppError('session_expired') : new AppError('unauthorized', 'The console session is unknown; sign in again.');
      }
      if (!SAFE_METHODS.has(request.method)) {
        const presented = request.headers[CSRF_HEADER];
        if (!deps.sessions.checkCsrf(token, typeof presented === 'string' ? presented : undefined)) throw new AppError('csrf_token_invalid');
      }
      request.consoleSession = found.value;
      request.sessionToken = token;
      principal = deps.sessions.principal(found.value);
      if (principal === null && !auth.sessionOnly) throw new AppError('insufficient_scope', 'You are not a member of any account.');
    }
    request.principal = principal;
    if (principal !== null) {
      request.log = request.log.child({ account_id: principal.accountId, key_id: principal.keyId });
      if (auth.scope !== null) requireScope(principal.scopes, auth.scope);
    }
  });
  return table;
}
