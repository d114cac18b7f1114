// Operations routes, all public: liveness, readiness and the OpenAPI document (the /docs viewer
// is @fastify/swagger-ui, registered in app.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { buildOpenApi } from '../openapi.ts';
import type { RouteAuth } from '../plugins/auth.ts';
import { responses } from '../schemas/common.ts';

export type ReadinessCheck = () => Promise<Record<string, 'ok'>>;

export function opsRoutes(app: FastifyInstance, options: { ready: ReadinessCheck; /** Read per document: the real port is known only once the server listens. */ baseUrl: () => string; isClosing: () => boolean; auth?: ReadonlyMap<string, RouteAuth> }): void {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        tags: ['Operations'],
        summary: 'Liveness: the process answers',
        response: responses(Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false }), [], { authenticated: false }),
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: database and storage answer and the service is not shutting down',
        response: responses(
          Type.Object({ status: Type.Literal('ready'), checks: Type.Record(Type.String(), Type.Literal('ok')) }, { additionalProperties: false }),
          ['service_unavailable'],
          { authenticated: false },
        ),
      },
    },
    async (request) => {
      if (options.isClosing()) throw new AppError('service_unavailable', 'The service is shutting down.');
      try {
        return { status: 'ready' as const, checks: await options.ready() };
      } catch (cause) {
        request.log.warn({ err: cause }, 'readiness check failed');
        throw new AppError('service_unavailable', `Not ready: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
      }
    },
  );

  let openapi: string | null = null;
  // Built on first request: every route is registered by then (ready() has run), and the server
  // listens, so the base URL carries the real port.
  const document = (): string => (openapi ??= JSON.stringify(buildOpenApi(app, options.baseUrl(), options.auth)));

  app.get(
    '/v1/openapi.json',
    { config: { public: true }, schema: { tags: ['Operations'], summary: 'This API as an OpenAPI 3.1 document' } },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(document()),
  );
}
