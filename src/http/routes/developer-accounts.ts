// Apple developer accounts for super signature: register (multipart: API key + distribution
// identity), list, get, re-check, delete. Key files are small and read into memory (64 KiB cap).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import type { DeveloperAccountInput, DeveloperAccountService } from '../../services/developer-accounts.ts';
import { type MultipartForm, readMultipartForm } from '../multipart-form.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, NullableString, responses, Timestamp } from '../schemas/common.ts';
import { Health as CertificateHealth, IdParam } from '../schemas/resources.ts';
import { developerAccountView } from '../views.ts';

const MAX_FILE_BYTES = 64 * 1024;
const FILE_FIELDS = ['p8', 'p12'] as const;
const TEXT_FIELDS = ['name', 'issuer_id', 'key_id', 'password', 'p8'] as const;

const Slot = Type.Object({ used: Type.Integer(), limit: Type.Integer(), free: Type.Integer() }, { additionalProperties: false });
const Health = Type.Union(['ok', 'key_rejected', 'agreement_required', 'certificate_expired', 'certificate_revoked', 'unreachable'].map((h) => Type.Literal(h)), {
  description: '`ok`, or why the account cannot take new devices: the API key was rejected, agreements must be accepted, the certificate expired or was revoked, or Apple was unreachable at the last check.',
});

export const DeveloperAccount = Type.Object(
  {
    id: Type.String({ description: '`dac_…`' }),
    name: NullableString(),
    issuer_id: Type.String(),
    key_id: Type.String(),
    team_id: Type.String({ description: 'Apple team id.' }),
    certificate: Type.Object({ subject: Type.String(), serial_number: Type.String(), expires_at: Timestamp }, { additionalProperties: false }),
    health: Health,
    health_detail: NullableString('Apple\'s explanation when health is not ok.'),
    certificate_health: CertificateHealth,
    usable: Type.Boolean({ description: 'Healthy with a current certificate: new devices may be registered in it.' }),
    slots: Type.Object(
      { iphone: Slot, ipad: Slot, ipod: Slot },
      { additionalProperties: false, description: 'Device slots per class for this membership year (Apple never gives a used slot back before renewal).' },
    ),
    checked_at: Timestamp,
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

type Form = MultipartForm<(typeof FILE_FIELDS)[number], (typeof TEXT_FIELDS)[number]>;

const readForm = (request: FastifyRequest): Promise<Form> =>
  readMultipartForm(request, { what: 'the developer account', fileFields: FILE_FIELDS, textFields: TEXT_FIELDS, maxFileBytes: MAX_FILE_BYTES, maxFieldBytes: 8192 });

function toInput(form: Form): DeveloperAccountInput {
  const required = (field: 'issuer_id' | 'key_id') => {
    const value = form.text[field]?.trim();
    if (!value) throw new AppError('invalid_request', `${field} is required`, { details: { field } });
    return value;
  };
  const p8 = form.files.p8?.data.toString('utf8') ?? form.text.p8;
  if (!p8) throw new AppError('invalid_request', 'p8 is required (the AuthKey_….p8 file of the API key)', { details: { field: 'p8' } });
  const p12 = form.files.p12?.data;
  if (!p12) throw new AppError('invalid_request', 'p12 is required (the distribution certificate with its private key)', { details: { field: 'p12' } });
  return { name: form.text.name ?? null, issuerId: required('issuer_id'), keyId: required('key_id'), p8, p12, password: form.text.password ?? null };
}

const AccountId = IdParam('developer_account_id', '`dac_…`');
const APPLE_ERRORS = ['developer_key_rejected', 'developer_agreement_required', 'apple_rate_limited', 'apple_unavailable', 'apple_request_failed'] as const;

export function developerAccountRoutes(app: FastifyInstance, accounts: DeveloperAccountService): void {
  app.post(
    '/v1/developer-accounts',
    {
      config: { scope: 'certificates:write' },
      schema: {
        tags: ['Developer accounts'],
        summary: 'Register an Apple developer account for super signature',
        description:
          'Multipart form. `issuer_id` and `key_id`: the App Store Connect API key (Users and Access › Integrations; Admin role). `p8`: the ' +
          'AuthKey_….p8 file (or its PEM text). `p12`: the team\'s distribution certificate (Apple Distribution or iOS Distribution) with its ' +
          'private key; `password`: its password. `name`: a label. Signet checks the key against App Store Connect, requires the certificate to ' +
          'be current in that team, and syncs the team\'s devices and App IDs. Key, .p12 and password are encrypted at rest.',
        consumes: ['multipart/form-data'],
        response: responses(envelope(DeveloperAccount), [
          ...APPLE_ERRORS,
          'developer_certificate_mismatch',
          'developer_certificate_unusable',
          'certificate_password_incorrect',
          'certificate_invalid',
          'keystore_unsupported',
          'unsupported_media_type',
        ]),
      },
    },
    async (request) => ({ code: 200, data: developerAccountView(await accounts.create(principalOf(request), toInput(await readForm(request)))) }),
  );

  app.get(
    '/v1/developer-accounts',
    {
      schema: {
        tags: ['Developer accounts'],
        summary: 'List developer accounts with their health and device slots',
        response: responses(envelope(Type.Object({ items: Type.Array(DeveloperAccount) }, { additionalProperties: false })), []),
      },
    },
    async (request) => ({ code: 200, data: { items: (await accounts.list(principalOf(request))).map(developerAccountView) } }),
  );

  app.get(
    '/v1/developer-accounts/:developer_account_id',
    { schema: { tags: ['Developer accounts'], summary: 'Get a developer account', params: AccountId, response: responses(envelope(DeveloperAccount), ['developer_account_not_found']) } },
    async (request) => {
      const { developer_account_id } = request.params as { developer_account_id: string };
      return { code: 200, data: developerAccountView(await accounts.get(principalOf(request), developer_account_id)) };
    },
  );

  app.post(
    '/v1/developer-accounts/:developer_account_id/check',
    {
      config: { scope: 'certificates:write' },
      schema: {
        tags: ['Developer accounts'],
        summary: 'Re-check a developer account against App Store Connect',
        description: 'Verifies the key and the certificate again and resyncs devices and App IDs; the result is the account\'s `health`.',
        params: AccountId,
        response: responses(envelope(DeveloperAccount), ['developer_account_not_found', 'apple_rate_limited', 'apple_request_failed']),
      },
    },
    async (request) => {
      const { developer_account_id } = request.params as { developer_account_id: string };
      return { code: 200, data: developerAccountView(await accounts.check(principalOf(request), developer_account_id)) };
    },
  );

  app.put(
    '/v1/developer-accounts/:developer_account_id/certificate',
    {
      config: { scope: 'certificates:write' },
      schema: {
        tags: ['Developer accounts'],
        summary: 'Replace the distribution certificate (rotation)',
        description:
          'Multipart form: `p12` (the new distribution certificate with its key) and `password`. It must be current in the team. Every profile made ' +
          'with the old certificate is retired (and deleted at Apple); the next device request makes new profiles and builds signed with the new one.',
        consumes: ['multipart/form-data'],
        params: AccountId,
        response: responses(envelope(DeveloperAccount), [...APPLE_ERRORS, 'developer_account_not_found', 'developer_certificate_mismatch', 'developer_certificate_unusable', 'certificate_password_incorrect', 'certificate_invalid', 'unsupported_media_type']),
      },
    },
    async (request) => {
      const { developer_account_id } = request.params as { developer_account_id: string };
      const form = await readForm(request);
      const p12 = form.files.p12;
      if (!p12) throw new AppError('invalid_request', 'p12 is required (the new distribution certificate with its private key)', { details: { field: 'p12' } });
      return { code: 200, data: developerAccountView(await accounts.replaceCertificate(principalOf(request), developer_account_id, { p12: p12.data, password: form.text.password ?? null })) };
    },
  );

  app.delete(
    '/v1/developer-accounts/:developer_account_id',
    {
      config: { scope: 'certificates:write' },
      schema: {
        tags: ['Developer accounts'],
        summary: 'Remove a developer account from Signet',
        description: 'Nothing is deleted at Apple: registered devices keep their slots and installed apps keep working until their profile expires.',
        params: AccountId,
        response: responses(envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false })), ['developer_account_not_found']),
      },
    },
    async (request) => {
      const { developer_account_id } = request.params as { developer_account_id: string };
      await accounts.delete(principalOf(request), developer_account_id);
      return { code: 200, data: { id: developer_account_id, deleted: true as const } };
    },
  );
}
