// Security headers on every HTML answer through @fastify/helmet. The Content-Security-Policy allows
// scripts and styles from Signet's own files only (the install pages' /pages/ assets, the
// console's /assets/, swagger-ui's /docs/static/), no inline code (a route's own inline code is
// allowed by its SHA-256, CSP Level 3 §8.3), so injected markup cannot run; `frame-ancestors 'none'` keeps the password
// page and the console out of frames. HSTS only when the public URL is https (browsers ignore it over http anyway, and a
// plain-http deployment must not tell them to insist on https). A route that needs another policy
// (a /docs page with a bundled viewer, say) passes its own with the route option
// `helmet: { contentSecurityPolicy: { directives: … } }`.
// JSON answers get only `X-Content-Type-Options: nosniff`: @fastify/helmet builds its whole
// middleware on every request it handles, which cost the API about a sixth of its throughput
// (bench:api) for headers a JSON body does not use. Pages are routes under /d/ and /a/, /docs and
// the console's pages (routes with `config: { page: true }`); error pages of paths no route matches apply the same headers through `reply.helmet()`.
import { createHash } from 'node:crypto';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

const hashOf = (source: string): string => `'sha256-${createHash('sha256').update(source, 'utf8').digest('base64')}'`;

/** The CSP directives every page shares; routes may extend or replace them. */
export function contentSecurityPolicy(extra: { scripts?: readonly string[]; styles?: readonly string[] } = {}): Record<string, string[]> {
  return {
    'default-src': ["'none'"],
    'script-src': ["'self'", ...(extra.scripts ?? []).map(hashOf)],
    'style-src': ["'self'", ...(extra.styles ?? []).map(hashOf)],
    'img-src': ["'self'", 'data:'],
    // The console calls the API it is served with.
    'connect-src': ["'self'"],
    'form-action': ["'self'"],
    'frame-ancestors': ["'none'"],
    'base-uri': ["'none'"],
  };
}

/** Routes answering HTML (install pages, app links, UDID capture, the API reference, the console). */
export const isPageRoute = (url: string, config?: { page?: boolean }): boolean => url === '/docs' || /^\/[da]\//.test(url) || config?.page === true;

export async function installSecurityHeaders(app: FastifyInstance, options: { https: boolean }): Promise<void> {
  // Before helmet's own onRoute hook, which reads the route option.
  app.addHook('onRoute', (route) => {
    const withHelmet = route as typeof route & { helmet?: object | false };
    if (withHelmet.helmet === undefined && isPageRoute(route.url, route.config)) withHelmet.helmet = {};
  });
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
  });
  await app.register(helmet, {
    global: false,
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy() },
    strictTransportSecurity: options.https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    // QR codes and icons may be shown by other sites (CI dashboards); the API has no cookies.
    crossOriginResourcePolicy: { policy: 'cross-origin' },
  });
}
