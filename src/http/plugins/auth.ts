// Bearer API-key authentication, as an onRequest hook (the per-key rate limit follows as a route
// hook, src/http/limits.ts). Routes opt out with `config: { public: true }` (health, OpenAPI,
// docs, install pages). The key itself is never logged; the request log carries the key id once
// authenticated.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { Principal } from '../../services/principal.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    public?: boolean;
  }
}

export type Authenticate = (token: string) => Promise<Principal | null>;

/** The principal of an authenticated route; throws if called on a public one (a wiring bug). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized');
  return request.principal;
}

export function installAuth(app: FastifyInstance, authenticate: Authenticate): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public || !request.routeOptions.url) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer +(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) throw new AppError('unauthorized', header ? 'The Authorization header must be "Bearer sk_…".' : 'Missing Authorization: Bearer header.');
    const principal = await authenticate(match[1]);
    if (!principal) throw new AppError('unauthorized', 'The API key is unknown or revoked.');
    request.principal = principal;
    request.log = request.log.child({ account_id: principal.accountId, key_id: principal.keyId });
  });
}
