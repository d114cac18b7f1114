// UDID capture for super-signature install links (distribution-protocols.md §3.1):
//   GET  /d/{slug}/udid.mobileconfig      the signed Profile Service request (Safari downloads it)
//   POST /d/{slug}/udid?challenge=…       the device's CMS-signed answer (the iOS profile daemon,
//                                         no cookies, any Content-Type) → 301 to the install page
//   GET  /d/{slug}/enrollments/{id}       the enrollment's progress as JSON (page polling, tests)
// The POST answers 301 and nothing else on success: iOS reports "invalid profile" for a 302 or a
// 200 without a profile (§3.1.4), then opens Safari at Location.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { messages } from '../../distribution/i18n/index.ts';
import type { DistributionService, Release } from '../../distribution/service.ts';
import { MAX_DEVICE_RESPONSE_BYTES } from '../../super-signature/mobileconfig.ts';
import type { EnrollmentService } from '../../super-signature/enrollment.ts';
import { withEnrollment } from '../../super-signature/install-section.ts';
import { AppError } from '../../errors.ts';
import { sendErrorAsPage } from '../plugins/errors.ts';
import { pageLanguage, refusalText, sendPage } from '../public-pages.ts';
import { accessOf } from './install-pages.ts';

export interface UdidRouteDeps {
  distributions: DistributionService;
  enrollments: EnrollmentService;
  linkKey: Buffer;
  /** The public URL is https (the language cookie gets `Secure`). */
  secure: boolean;
}

const schema = (summary: string, description?: string) => ({ tags: ['Install pages'], summary, ...(description ? { description } : {}) });
const PUBLIC = { public: true } as const;

export async function udidRoutes(app: FastifyInstance, deps: UdidRouteDeps): Promise<void> {
  const { distributions, enrollments, linkKey } = deps;

  await app.register(async (scope) => {
    // The device's body is CMS whatever its Content-Type says (§3.1.3): read every type as bytes.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_DEVICE_RESPONSE_BYTES }, (_request, body, done) => done(null, body));

    // A body over the limit is not a profile answer a device would send.
    scope.setErrorHandler(async (error, request, reply) => {
      const refused = (error as { statusCode?: number }).statusCode === 413 ? new AppError('device_response_invalid', 'The device answer is larger than any real one.') : error;
      const notSuper = refused instanceof AppError && refused.details?.reason === 'not_super';
      return sendErrorAsPage(request, reply, refused, {
        secure: deps.secure,
        describe: (language, code) => {
          const t = messages(language);
          const message =
            notSuper ? t.registrationNotSuper
            : code === 'device_response_invalid' ? t.registrationInvalid
            : code === 'udid_challenge_invalid' ? t.registrationExpired
            : code === 'device_udid_invalid' ? t.registrationBadUdid
            : refusalText(language, code)[1];
          return { title: t.registrationFailedTitle, message };
        },
      });
    });

    /** A super release that may be used now (the same availability rules as its page). */
    const superRelease = async (slug: string): Promise<Release> => {
      const release = await distributions.availableRelease(slug);
      if (!enrollments.isSuper(release)) throw new AppError('distribution_not_found', 'This install link does not register devices.', { details: { reason: 'not_super' } });
      return release;
    };

    scope.get(
      '/d/:slug/udid.mobileconfig',
      { config: PUBLIC, schema: schema('Device registration profile (super signature)', 'A signed Profile Service .mobileconfig; installing it sends the device\'s UDID to Signet.') },
      async (request, reply) => {
        const { slug } = request.params as { slug: string };
        const release = await superRelease(slug);
        if (!accessOf(request, linkKey, release.distribution)) throw new AppError('password_required');
        const name = release.task.app_name ?? release.task.bundle_id ?? 'the app';
        const profile = await enrollments.requestProfile(release, name, await distributions.organization(release.task));
        return reply
          .type('application/x-apple-aspen-config')
          .header('content-disposition', `attachment; filename="${(release.task.bundle_id ?? 'signet').replace(/[^\w.-]/g, '')}.mobileconfig"`)
          .header('cache-control', 'no-store')
          .send(profile.bytes);
      },
    );

    scope.post(
      '/d/:slug/udid',
      { config: PUBLIC, schema: schema('Device answer to the registration profile', 'Called by iOS, not by people: a CMS-signed plist of device attributes. Answers 301 to the install page.') },
      async (request, reply) => {
        const { slug } = request.params as { slug: string };
        const release = await superRelease(slug);
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const location = await enrollments.receive(release, (request.query as { challenge?: string }).challenge, body);
        return reply.code(301).header('location', location).header('cache-control', 'no-store').send();
      },
    );

    scope.get(
      '/d/:slug/enrollments/:enrollment_id',
      { config: PUBLIC, schema: schema('Progress of a device registration (JSON)') },
      async (request, reply: FastifyReply) => {
        const { slug, enrollment_id } = request.params as { slug: string; enrollment_id: string };
        const release = await superRelease(slug);
        const status = await enrollments.status(release, enrollment_id);
        if (!status) throw new AppError('udid_challenge_invalid', 'No such device registration for this link.');
        const { enrollment, build } = status;
        return reply.header('cache-control', 'no-store').send({
          code: 200,
          data: {
            id: enrollment.id,
            state: enrollment.state,
            error: enrollment.error_code ? { code: enrollment.error_code, message: enrollment.error_message } : null,
            udid: enrollment.udid,
            build: build ? { id: build.id, state: build.state, size: build.artifact_size, sha256: build.artifact_sha256 } : null,
            manifest_url: build?.state === 'ready' ? withEnrollment(distributions.links(release.distribution).manifest_url!, enrollment.id) : null,
          },
        });
      },
    );
  });
}
