// The web console at `/`: the Vite build in console/dist, streamed from disk by @fastify/static
// (nothing is read into memory at start-up). Each page of the single-page app is an explicit
// route answering index.html, so the console never shadows the API (/v1), install links (/d/,
// /a/), /docs or the health checks, and unknown paths still get the API's JSON 404.
// Hashed assets are cached for a year; index.html is revalidated on every load.
import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';

/** The console's pages (console/src/router.ts has the same list; a test keeps them equal). */
export const CONSOLE_PAGES = [
  '/',
  '/sign-in',
  '/setup',
  '/invite',
  '/reset-password',
  '/apps',
  '/apps/:app_id',
  '/upload',
  '/tasks',
  '/tasks/:task_id',
  '/certificates',
  '/developer-accounts',
  '/alerts',
  '/links',
  '/settings/developer',
  '/members',
  '/profile',
] as const;

const NOT_BUILT = 'The console is not built: run `npm run build:console` (npm ci does it).';

export async function consoleRoutes(app: FastifyInstance, options: { dir: string | null }): Promise<void> {
  const dir = options.dir !== null && existsSync(path.join(options.dir, 'index.html')) ? options.dir : null;
  const hidden = { hide: true } as Record<string, unknown>;
  if (dir !== null) await app.register(fastifyStatic, { root: dir, serve: false, decorateReply: true });

  const page = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    if (dir === null) throw new AppError('service_unavailable', NOT_BUILT);
    reply.header('cache-control', 'no-cache');
    return reply.sendFile('index.html', { cacheControl: false });
  };
  for (const url of CONSOLE_PAGES) app.get(url, { config: { public: true, page: true }, schema: hidden }, page);

  app.get('/assets/*', { config: { public: true }, schema: hidden }, async (request, reply) => {
    if (dir === null) throw new AppError('service_unavailable', NOT_BUILT);
    const file = (request.params as { '*': string })['*'];
    // Vite's asset names are flat `name-hash.ext`: anything else (sub-paths, `..`) is not ours.
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.[a-z0-9]+$/.test(file)) throw new AppError('not_found', `No route GET ${request.url.split('?')[0]}.`);
    // Vite names assets by content hash: a given URL never changes.
    return reply.sendFile(path.posix.join('assets', file), { immutable: true, maxAge: 365 * 24 * 3600 * 1000 });
  });
}
