// The provisioning profiles of an iOS enterprise certificate: attach (multipart `profile`), list,
// read, remove. An app whose extensions have explicit App IDs of their own (push, app groups…)
// needs one profile per App ID; a task picks, for each bundle, the profile that matches it most
// specifically, or the one the task names.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import type { CertificateService } from '../../services/certificates.ts';
import { readMultipartForm } from '../multipart-form.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { CertificateProfile } from '../schemas/resources.ts';
import { certificateProfileView } from '../views.ts';

const Params = Type.Object({
  certificate_id: Type.String({ minLength: 1, maxLength: 100, description: '`crt_…`' }),
});
const ProfileParams = Type.Object({
  certificate_id: Type.String({ minLength: 1, maxLength: 100, description: '`crt_…`' }),
  profile_id: Type.String({ minLength: 1, maxLength: 100, description: '`prf_…`' }),
});

async function readProfile(request: FastifyRequest): Promise<Buffer> {
  const form = await readMultipartForm(request, { what: 'the profile', fileFields: ['profile'] as const, textFields: [] as const, maxFileBytes: 1024 * 1024, maxFieldBytes: 1024 });
  if (!form.files.profile) throw new AppError('invalid_request', 'profile is required (a .mobileprovision file)', { details: { field: 'profile' } });
  return form.files.profile.data;
}

export function certificateProfileRoutes(app: FastifyInstance, certificates: CertificateService): void {
  app.post(
    '/v1/certificates/:certificate_id/profiles',
    {
      schema: {
        tags: ['Certificates'],
        summary: 'Attach a provisioning profile to an iOS enterprise certificate',
        description:
          'Multipart form with one file field, `profile` (.mobileprovision). The profile must name the certificate. Attaching a profile ' +
          'the certificate already holds (same UUID) returns it unchanged. Tasks choose among a certificate\'s profiles per bundle.',
        consumes: ['multipart/form-data'],
        params: Params,
        response: responses(envelope(CertificateProfile), ['certificate_not_found', 'profile_certificate_mismatch', 'profile_expired', 'profile_invalid', 'unsupported_media_type']),
      },
    },
    async (request) => {
      const { certificate_id } = request.params as { certificate_id: string };
      const { profile, warnings } = await certificates.addProfile(principalOf(request), certificate_id, await readProfile(request));
      const view = certificateProfileView(profile);
      return { code: 200, data: warnings.length > 0 ? { ...view, warnings } : view };
    },
  );

  app.get(
    '/v1/certificates/:certificate_id/profiles',
    {
      schema: {
        tags: ['Certificates'],
        summary: 'List a certificate\'s provisioning profiles, oldest first',
        params: Params,
        response: responses(envelope(Type.Object({ items: Type.Array(CertificateProfile) }, { additionalProperties: false })), ['certificate_not_found']),
      },
    },
    async (request) => {
      const { certificate_id } = request.params as { certificate_id: string };
      return { code: 200, data: { items: (await certificates.listProfiles(principalOf(request), certificate_id)).map(certificateProfileView) } };
    },
  );

  app.get(
    '/v1/certificates/:certificate_id/profiles/:profile_id',
    {
      schema: {
        tags: ['Certificates'],
        summary: 'Get one provisioning profile of a certificate',
        params: ProfileParams,
        response: responses(envelope(CertificateProfile), ['certificate_not_found', 'profile_not_found']),
      },
    },
    async (request) => {
      const { certificate_id, profile_id } = request.params as { certificate_id: string; profile_id: string };
      return { code: 200, data: certificateProfileView(await certificates.getProfile(principalOf(request), certificate_id, profile_id)) };
    },
  );

  app.delete(
    '/v1/certificates/:certificate_id/profiles/:profile_id',
    {
      schema: {
        tags: ['Certificates'],
        summary: 'Remove a provisioning profile from a certificate',
        description: 'Refused while pending or processing tasks use the certificate, and for its last profile (attach the replacement first).',
        params: ProfileParams,
        response: responses(envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false })), [
          'certificate_not_found',
          'profile_not_found',
          'certificate_in_use',
          'certificate_profile_required',
        ]),
      },
    },
    async (request) => {
      const { certificate_id, profile_id } = request.params as { certificate_id: string; profile_id: string };
      await certificates.deleteProfile(principalOf(request), certificate_id, profile_id);
      return { code: 200, data: { id: profile_id, deleted: true as const } };
    },
  );
}
