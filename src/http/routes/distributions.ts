// Install links on the API side: a task's distribution, its settings, and its download counts.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { DistributionRow } from '../../db/distribution-tables.ts';
import type { DistributionService, DistributionSettings, ReleaseRequirements } from '../../distribution/service.ts';
import { AppError } from '../../errors.ts';
import { principalOf } from '../plugins/auth.ts';
import { AppIdentity, envelope, NullableString, Platform, responses, Timestamp } from '../schemas/common.ts';
import { IdParam } from '../schemas/resources.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

export const Distribution = Type.Object(
  {
    id: Type.String({ description: '`dst_…`' }),
    task_id: Type.String(),
    app_id: NullableString(),
    platform: Platform,
    url: Type.String({ description: 'The public install page.' }),
    qr_code_url: Type.String({ description: 'QR code of the install page (SVG; `.png` also exists).' }),
    download_url: Type.String({ description: 'Direct download of the signed package (counted).' }),
    manifest_url: NullableString('iOS only: the OTA manifest.'),
    itms_services_url: NullableString('iOS only: the `itms-services://` link that installs the app.'),
    app_url: NullableString("The app's permanent link, which always serves its newest release."),
    app: Type.Object(AppIdentity, { additionalProperties: false, description: 'What the link installs.' }),
    expires_at: Nullable(Timestamp, 'After this time the link answers 410. Null: never.'),
    password_protected: Type.Boolean(),
    max_downloads: Nullable(Type.Integer(), 'Download quota; null: unlimited.'),
    downloads: Type.Integer({ description: 'Downloads so far (resumed downloads are not counted twice).' }),
    enabled: Type.Boolean(),
    requirements: Type.Object(
      {
        minimum_os: NullableString('iOS MinimumOSVersion ("15.0"), or the Android minSdkVersion as an API level ("24").'),
        device_families: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'iOS: "iphone", "ipad", … from UIDeviceFamily.' }),
        native_abis: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'Android: ABIs with native code (lib/<abi>/); [] runs on every ABI.' }),
      },
      { additionalProperties: false, description: 'What the signed package requires, read when the link was published (nulls: not recorded).' },
    ),
    downloads_by_day: Type.Array(Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD.' }), downloads: Type.Integer() }, { additionalProperties: false }), {
      description: 'Downloads per UTC day, newest first.',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

// Nullable fields use a JSON-schema type array, not anyOf[…, null]: fastify's Ajv coerces types,
// and inside anyOf a refused `0` or `""` would be coerced to null by the null branch, silently
// turning "quota 0" into "unlimited" or an empty password into "no password".
const nullable = (type: 'string' | 'integer', constraints: Record<string, unknown>, description: string) =>
  Type.Unsafe<string | number | null>({ type: [type, 'null'], ...constraints, description });

const PatchBody = Type.Object(
  {
    password: Type.Optional(nullable('string', { minLength: 1, maxLength: 200 }, 'Require this password on the install page; null removes it.')),
    expires_at: Type.Optional(nullable('string', { format: 'date-time' }, 'Expiry time; null: never expires.')),
    max_downloads: Type.Optional(nullable('integer', { minimum: 1, maximum: 1_000_000_000 }, 'Download quota; null: unlimited.')),
    enabled: Type.Optional(Type.Boolean({ description: 'false turns the link off (410) without deleting it.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export function distributionRoutes(app: FastifyInstance, distributions: DistributionService): void {
  const view = async (d: DistributionRow) => ({
    id: d.id,
    task_id: d.task_id,
    app_id: d.app_id,
    platform: d.platform,
    ...distributions.links(d),
    app_url: d.app_id ? await distributions.appLinkUrl(d.app_id) : null,
    app: await distributions.appOf(d),
    expires_at: d.expires_at,
    password_protected: d.password_hash !== null,
    max_downloads: d.max_downloads,
    downloads: d.downloads,
    enabled: d.enabled === 'yes',
    requirements: requirementsView(distributions.requirements(d)),
    downloads_by_day: await distributions.dailyDownloads(d.id),
    created_at: d.created_at,
    updated_at: d.updated_at,
  });

  app.get(
    '/v1/tasks/:task_id/distribution',
    {
      schema: {
        tags: ['Distributions'],
        summary: "Get a task's install link",
        description: 'Exists once the task has succeeded.',
        params: IdParam('task_id', '`tsk_…`'),
        response: responses(envelope(Distribution), ['task_not_found', 'artifact_not_ready']),
      },
    },
    async (request) => {
      const { task_id } = request.params as { task_id: string };
      return { code: 200, data: await view(await distributions.forTask(principalOf(request).accountId, task_id)) };
    },
  );

  app.get(
    '/v1/distributions',
    {
      schema: {
        tags: ['Distributions'],
        summary: 'List install links, newest first',
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`next_cursor` of the previous page.' })),
        }),
        response: responses(envelope(Type.Object({ items: Type.Array(Distribution), next_cursor: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false })), []),
      },
    },
    async (request) => {
      const query = request.query as { limit?: number; cursor?: string };
      const page = await distributions.list(principalOf(request).accountId, { limit: query.limit ?? 20, cursor: query.cursor ?? null });
      return { code: 200, data: { items: await Promise.all(page.items.map(view)), next_cursor: page.nextCursor } };
    },
  );

  app.get(
    '/v1/distributions/:distribution_id',
    {
      schema: {
        tags: ['Distributions'],
        summary: 'Get an install link with its download counts',
        params: IdParam('distribution_id', '`dst_…`'),
        response: responses(envelope(Distribution), ['distribution_not_found']),
      },
    },
    async (request) => {
      const { distribution_id } = request.params as { distribution_id: string };
      return { code: 200, data: await view(await distributions.find(principalOf(request).accountId, distribution_id)) };
    },
  );

  app.patch(
    '/v1/distributions/:distribution_id',
    {
      config: { scope: 'links:write' },
      schema: {
        tags: ['Distributions'],
        summary: 'Change password, expiry, download quota or enabled',
        params: IdParam('distribution_id', '`dst_…`'),
        body: PatchBody,
        response: responses(envelope(Distribution), ['distribution_not_found']),
      },
    },
    async (request) => {
      const { distribution_id } = request.params as { distribution_id: string };
      const body = request.body as { password?: string | null; expires_at?: string | null; max_downloads?: number | null; enabled?: boolean };
      if (Object.keys(body).length === 0) {
        throw new AppError('invalid_request', 'give at least one of password, expires_at, max_downloads, enabled');
      }
      const settings: DistributionSettings = {};
      if (body.password !== undefined) settings.password = body.password;
      if (body.max_downloads !== undefined) settings.maxDownloads = body.max_downloads;
      if (body.enabled !== undefined) settings.enabled = body.enabled;
      if (body.expires_at !== undefined) {
        const at = body.expires_at === null ? null : new Date(body.expires_at);
        if (at !== null && Number.isNaN(at.getTime())) throw new AppError('invalid_request', 'expires_at must be an ISO 8601 date-time', { details: { field: 'expires_at' } });
        settings.expiresAt = at;
      }
      const updated = await distributions.update(principalOf(request).accountId, distribution_id, settings);
      return { code: 200, data: await view(updated) };
    },
  );
}

function requirementsView(requirements: ReleaseRequirements) {
  return { minimum_os: requirements.minimumOs, device_families: requirements.deviceFamilies, native_abis: requirements.nativeAbis };
}
