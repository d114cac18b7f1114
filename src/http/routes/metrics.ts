// GET /metrics: Prometheus text format, only when SIGNET_METRICS_TOKEN is set, and only with
// `Authorization: Bearer <token>` (compared in constant time). Without a token the route does not
// exist (404), so a default install exposes nothing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import type { Metrics } from '../../services/metrics.ts';

export function metricsRoutes(app: FastifyInstance, options: { metrics: Metrics; token: string }): void {
  const expected = createHash('sha256').update(options.token).digest();
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const match = /^Bearer +(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const given = createHash('sha256').update(match?.[1] ?? '').digest();
    if (!match || !timingSafeEqual(given, expected)) throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer <SIGNET_METRICS_TOKEN>.');
    return reply.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });
}
