// The public pages' stylesheet and script (src/distribution/pages/page-assets.ts), served by
// content-hashed names so they can be cached for good: the pages carry no inline code.
import type { FastifyInstance } from 'fastify';
import { pageAssets } from '../../distribution/pages/page-assets.ts';
import { AppError } from '../../errors.ts';

export function pageAssetRoutes(app: FastifyInstance): void {
  app.get('/pages/:file', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const asset = Object.values(pageAssets()).find((a) => a.path === `/pages/${file}`);
    if (!asset) throw new AppError('not_found');
    return reply
      .type(asset.contentType)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(asset.body);
  });
}
