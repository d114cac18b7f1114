// Apps: uploaded packages grouped by platform and bundle id, with their uploads and tasks.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppService } from '../../services/apps.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { AppDetail, AppSummary, IdParam } from '../schemas/resources.ts';
import { appDetailView, appSummaryView } from '../views.ts';

/** `baseUrl`: the public base artifact links are built on. */
export function appRoutes(app: FastifyInstance, apps: AppService, baseUrl: () => string): void {
  app.get(
    '/v1/apps',
    {
      schema: {
        tags: ['Apps'],
        summary: 'List apps, most recently updated first',
        response: responses(envelope(Type.Object({ items: Type.Array(AppSummary) }, { additionalProperties: false })), []),
      },
    },
    async (request) => ({ code: 200, data: { items: (await apps.list(principalOf(request))).map(appSummaryView) } }),
  );

  app.get(
    '/v1/apps/:app_id',
    {
      schema: {
        tags: ['Apps'],
        summary: 'Get an app with its uploads and tasks (newest first)',
        params: IdParam('app_id', '`app_…`'),
        response: responses(envelope(AppDetail), ['app_not_found']),
      },
    },
    async (request) => {
      const { app_id } = request.params as { app_id: string };
      return { code: 200, data: appDetailView(await apps.get(principalOf(request), app_id), baseUrl()) };
    },
  );
}
