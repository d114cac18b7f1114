// Certificate rotation: POST /v1/certificates/{id}/rotate re-signs every live release signed with
// one certificate with another (dry_run: only lists them); GET /v1/rotations/{id} shows progress.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { RotationService } from '../../services/rotations.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, NullableString, responses, Timestamp } from '../schemas/common.ts';
import { IdParam } from '../schemas/resources.ts';

const ItemState = Type.Union(['planned', 'running', 'done', 'failed', 'skipped'].map((s) => Type.Literal(s)), {
  description: '`planned` (dry run); `running`: its task signs; `done`: the link serves the new build; `failed`: the task failed, the link keeps the old build; `skipped`: the package is no longer stored, or the link changed meanwhile.',
});
const Rotation = Type.Object(
  {
    id: NullableString('`rot_…`; null for a dry run (nothing was stored).'),
    dry_run: Type.Boolean(),
    from_certificate_id: Type.String(),
    to_certificate_id: Type.String(),
    state: Type.Union(['planned', 'running', 'done', 'failed'].map((s) => Type.Literal(s))),
    counts: Type.Object({ planned: Type.Integer(), running: Type.Integer(), done: Type.Integer(), failed: Type.Integer(), skipped: Type.Integer() }, { additionalProperties: false }),
    items: Type.Array(
      Type.Object(
        {
          distribution_id: Type.String(),
          url: Type.String({ description: 'The install page; it keeps its URL.' }),
          platform: Type.String(),
          app: Type.Object({ bundle_id: NullableString(), name: NullableString(), version: NullableString(), build: NullableString() }, { additionalProperties: false }),
          old_task_id: Type.String(),
          new_task_id: NullableString('The task re-signing it (an ordinary task: GET /v1/tasks/{id}).'),
          state: ItemState,
          error: NullableString(),
        },
        { additionalProperties: false },
      ),
    ),
    created_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
);

export function rotationRoutes(app: FastifyInstance, rotations: RotationService): void {
  app.post(
    '/v1/certificates/:certificate_id/rotate',
    {
      config: { scope: 'certificates:write' },
      schema: {
        tags: ['Certificates'],
        summary: 'Re-sign every live release of a certificate with another',
        description:
          'Every release whose install link is live (enabled, unexpired) and was signed with this certificate is signed again with `to` by a background task; ' +
          'each link keeps its URL and serves the new build once it has verified (the old one until then). `dry_run: true` lists what would be re-signed and changes nothing.',
        params: IdParam('certificate_id', '`crt_…`: the certificate being replaced.'),
        body: Type.Object({ to: Type.String({ minLength: 1, maxLength: 100, description: '`crt_…`: the replacement, of the same kind.' }), dry_run: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        response: responses(envelope(Rotation), ['certificate_not_found', 'certificate_expired', 'certificate_revoked', 'rotation_in_progress']),
      },
    },
    async (request) => {
      const { certificate_id } = request.params as { certificate_id: string };
      const body = request.body as { to: string; dry_run?: boolean };
      return { code: 200, data: await rotations.rotate(principalOf(request), certificate_id, { to: body.to, dryRun: body.dry_run ?? false }) };
    },
  );

  app.get('/v1/rotations', { schema: { tags: ['Certificates'], summary: 'Recent certificate rotations, newest first', response: responses(envelope(Type.Object({ items: Type.Array(Rotation) }, { additionalProperties: false })), []) } }, async (request) => ({
    code: 200,
    data: { items: await rotations.list(principalOf(request)) },
  }));

  app.get(
    '/v1/rotations/:rotation_id',
    { schema: { tags: ['Certificates'], summary: 'A certificate rotation and its progress', params: IdParam('rotation_id', '`rot_…`'), response: responses(envelope(Rotation), ['rotation_not_found']) } },
    async (request) => ({ code: 200, data: await rotations.get(principalOf(request), (request.params as { rotation_id: string }).rotation_id) }),
  );
}
