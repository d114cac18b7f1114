// Certificates: upload (multipart), list, get, delete. Certificate files are small, so unlike
// packages they are read into memory (capped at 1 MiB per file) to be validated and sealed.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import type { CertificateInput, CertificateService } from '../../services/certificates.ts';
import { type MultipartForm, readMultipartForm } from '../multipart-form.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { Certificate, IdParam } from '../schemas/resources.ts';
import { certificateProfileRoutes } from './certificate-profiles.ts';
import { certificateView } from '../views.ts';

const MAX_FILE_BYTES = 1024 * 1024;
const FILE_FIELDS = ['file', 'profile', 'certificate'] as const;
const TEXT_FIELDS = ['kind', 'password', 'key_password', 'alias', 'name'] as const;

type Form = MultipartForm<(typeof FILE_FIELDS)[number], (typeof TEXT_FIELDS)[number]>;

const readForm = (request: FastifyRequest): Promise<Form> =>
  readMultipartForm(request, { what: 'the certificate', fileFields: FILE_FIELDS, textFields: TEXT_FIELDS, maxFileBytes: MAX_FILE_BYTES, maxFieldBytes: 4096 });

function toInput(form: Form): CertificateInput {
  const kind = form.text.kind;
  if (kind === undefined) throw new AppError('invalid_request', 'kind is required (ios_enterprise, ios_adhoc, ios_development or android)', { details: { field: 'kind' } });
  if (kind !== 'ios_enterprise' && kind !== 'ios_adhoc' && kind !== 'ios_development' && kind !== 'android') {
    throw new AppError('invalid_request', `kind must be ios_enterprise, ios_adhoc, ios_development or android, got "${kind}"`, { details: { field: 'kind' } });
  }
  const file = form.files.file;
  if (!file) throw new AppError('invalid_request', 'file is required (.p12/.pfx, .jks or PEM)');
  const base = {
    file,
    password: form.text.password ?? null,
    name: form.text.name ?? null,
  };
  if (kind !== 'android') {
    if (!form.files.profile) throw new AppError('invalid_request', `profile is required for ${kind} (.mobileprovision)`, { details: { field: 'profile' } });
    return { kind, ...base, profile: form.files.profile.data };
  }
  return { kind, ...base, alias: form.text.alias ?? null, keyPassword: form.text.key_password ?? null, certificate: form.files.certificate?.data ?? null };
}

const CertificateId = IdParam('certificate_id', '`crt_…`');

export function certificateRoutes(app: FastifyInstance, certificates: CertificateService): void {
  app.post(
    '/v1/certificates',
    {
      config: { scope: 'certificates:write' },
      schema: {
        tags: ['Certificates'],
        summary: 'Upload a signing certificate',
        description:
          'Multipart form. `kind`: `ios_enterprise` (in-house profiles), `ios_adhoc` (ad-hoc profiles: installs on the devices they list), `ios_development` (development profiles) or `android`; an iOS profile of another type is refused with `profile_kind_mismatch`. `file`: .p12/.pfx (iOS, Android), .jks (Android) or a PEM with the private key ' +
          'and certificate (Android; or the key alone plus a `certificate` file). `password`: the file\'s password. `key_password`: the key\'s own ' +
          'password when it differs (JKS). `alias`: which keystore entry (default: the only/first key). `profile`: the .mobileprovision (iOS, required). ' +
          '`name`: a label. The key, passwords and profile are encrypted at rest (AES-256-GCM). ' +
          'More profiles (extensions with their own App IDs) are attached with POST /v1/certificates/{certificate_id}/profiles. ' +
          'An expired certificate (`certificate_expired`), an expired profile (`profile_expired`) and a certificate its issuer revoked (`certificate_revoked`, asked of the OCSP responder the certificate names) are refused; ' +
          'a profile expiring within 7 days is accepted with a `profile_expiring` warning. `health` sums up dates, profiles and revocation.',
        consumes: ['multipart/form-data'],
        response: responses(envelope(Certificate), [
          'certificate_password_incorrect',
          'profile_certificate_mismatch',
          'certificate_invalid',
          'certificate_expired',
          'certificate_revoked',
          'profile_expired',
          'profile_kind_mismatch',
          'keystore_unsupported',
          'keystore_alias_not_found',
          'keystore_no_private_key',
          'key_certificate_mismatch',
          'key_type_unsupported',
          'profile_invalid',
          'unsupported_media_type',
        ]),
      },
    },
    async (request) => {
      const input = toInput(await readForm(request));
      return { code: 200, data: certificateView(await certificates.create(principalOf(request), input)) };
    },
  );

  app.get(
    '/v1/certificates',
    {
      schema: {
        tags: ['Certificates'],
        summary: 'List certificates, newest first',
        response: responses(envelope(Type.Object({ items: Type.Array(Certificate) }, { additionalProperties: false })), []),
      },
    },
    async (request) => ({ code: 200, data: { items: (await certificates.list(principalOf(request))).map(certificateView) } }),
  );

  app.get(
    '/v1/certificates/:certificate_id',
    { schema: { tags: ['Certificates'], summary: 'Get a certificate', params: CertificateId, response: responses(envelope(Certificate), ['certificate_not_found']) } },
    async (request) => {
      const { certificate_id } = request.params as { certificate_id: string };
      return { code: 200, data: certificateView(await certificates.get(principalOf(request), certificate_id)) };
    },
  );

  app.delete(
    '/v1/certificates/:certificate_id',
    {
      config: { scope: 'certificates:write' },
      schema: {
        tags: ['Certificates'],
        summary: 'Delete a certificate',
        description: 'Refused while a pending or processing task uses it.',
        params: CertificateId,
        response: responses(envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false })), ['certificate_not_found', 'certificate_in_use']),
      },
    },
    async (request) => {
      const { certificate_id } = request.params as { certificate_id: string };
      await certificates.delete(principalOf(request), certificate_id);
      return { code: 200, data: { id: certificate_id, deleted: true as const } };
    },
  );

  certificateProfileRoutes(app, certificates);
}
