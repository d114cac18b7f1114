// Public install links (no API key): the page, its manifest, the download, icon and QR codes, the
// app's permanent link and version history. Failures render HTML pages a tester can understand;
// the status codes still come from the catalogue (src/http/error-status.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkAccessToken, issueAccessToken, verifyPassword } from '../../distribution/access.ts';
import { buildManifest, itmsServicesUrl } from '../../distribution/manifest.ts';
import { renderHistoryPage, renderInstallPage, renderPasswordPage } from '../../distribution/page.ts';
import { qrPng, qrSvg } from '../../distribution/qr.ts';
import type { DistributionService, Release } from '../../distribution/service.ts';
import type { ArtifactOpener, EnrollmentService } from '../../super-signature/enrollment.ts';
import { renderSuperSection, withEnrollment } from '../../super-signature/install-section.ts';
import { classifyUserAgent, type Visitor } from '../../distribution/user-agent.ts';
import { AppError } from '../../errors.ts';
import { sendErrorAsPage } from '../plugins/errors.ts';
import type { PasswordThrottle } from '../limits.ts';
import { sendFile, startsAtZero } from '../send-file.ts';

export interface InstallPageDeps {
  distributions: DistributionService;
  /** HMAC key for access tokens of password-protected links. */
  linkKey: Buffer;
  /** The public URL is https (cookies get `Secure`; iOS installs can work). */
  secure: boolean;
  /** Super signature: per-device builds behind `?enrollment=` (absent: super links cannot install). */
  enrollments?: EnrollmentService;
  /** Failed-password lockouts per link and visitor address. */
  passwords: PasswordThrottle;
}

const schema = (summary: string, description?: string) => ({ tags: ['Install pages'], summary, ...(description ? { description } : {}) });
const PUBLIC = { public: true } as const;

export async function installPageRoutes(app: FastifyInstance, deps: InstallPageDeps): Promise<void> {
  const { distributions, linkKey } = deps;

  await app.register(async (scope) => {
    // The password form posts application/x-www-form-urlencoded; only this scope accepts it.
    // Strict: the form has one field, and anything else is refused by name (invalid_request).
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
      const fields = new URLSearchParams(body as string);
      const unknown = [...fields.keys()].find((name) => name !== 'password');
      if (unknown !== undefined) done(new AppError('invalid_request', `${unknown.slice(0, 100)} is not a known field`, { details: { field: unknown.slice(0, 100) } }), undefined);
      else done(null, Object.fromEntries(fields));
    });

    // Every public handler answers with HTML pages (catalogue code in Signet-Error), never JSON.
    scope.setErrorHandler(async (error, request, reply) => sendErrorAsPage(request, reply, error));

    /** The release, after the availability and password checks every route shares. */
    const open = async (request: FastifyRequest, reply: FastifyReply, slug: string): Promise<{ release: Release; token: string | null } | null> => {
      const release = await distributions.availableRelease(slug);
      const access = accessOf(request, linkKey, release.distribution);
      if (access) return { release, token: access.token };
      if (request.url.split('?')[0] === `/d/${slug}`) {
        await sendPage(reply.header('signet-error', 'password_required'), 401, renderPasswordPage(appName(release), `/d/${slug}`, false));
      } else {
        throw new AppError('password_required');
      }
      return null;
    };

    scope.get('/d/:slug', { config: PUBLIC, schema: schema('Install page', 'HTML page adapted to the visitor’s device: install button, QR code, guidance.') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const opened = await open(request, reply, slug);
      if (!opened) return reply;
      return sendPage(reply, 200, await installPage(request, opened.release, opened.token));
    });

    scope.post('/d/:slug', { config: PUBLIC, schema: schema('Unlock a password-protected install page') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const release = await distributions.availableRelease(slug);
      const hash = release.distribution.password_hash;
      const password = (request.body as { password?: unknown } | undefined)?.password;
      if (hash !== null) {
        // Locked out after too many wrong guesses: no scrypt is spent, the page says when to retry.
        deps.passwords.check(slug, request.ip);
        if (typeof password !== 'string' || !(await verifyPassword(password, hash))) {
          deps.passwords.failed(slug, request.ip);
          return sendPage(reply.header('signet-error', 'password_required'), 401, renderPasswordPage(appName(release), `/d/${slug}`, true));
        }
        deps.passwords.succeeded(slug, request.ip);
      }
      if (hash !== null) {
        const token = issueAccessToken(linkKey, slug, hash);
        reply.header('set-cookie', `${cookieName(slug)}=${token}; Path=/d/${slug}; Max-Age=86400; HttpOnly; SameSite=Lax${deps.secure ? '; Secure' : ''}`);
      }
      return reply.code(303).header('location', `/d/${slug}`).send();
    });

    scope.get('/d/:slug/manifest.plist', { config: PUBLIC, schema: schema('OTA manifest (itms-services)') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const opened = await open(request, reply, slug);
      if (!opened) return reply;
      const { token } = opened;
      const enrollment = enrollmentOf(request);
      const { release } = await personalize(opened.release, enrollment);
      if (release.distribution.platform !== 'ios') throw new AppError('distribution_not_found', 'Android apps have no OTA manifest');
      const links = withToken(distributions.links(release.distribution), token);
      const manifest = buildManifest({
        ipaUrl: withEnrollment(links.download_url, enrollment),
        ipaSha256: release.task.artifact_sha256,
        iconUrl: release.distribution.icon_blob_key ? `${links.url}/icon.png` : null,
        bundleId: release.task.bundle_id ?? '',
        version: release.task.app_version,
        title: appName(release),
      });
      // Manifests can carry per-visitor tokens: never cache them (distribution-protocols.md §1.3).
      return reply.type('text/xml; charset=utf-8').header('cache-control', 'no-store').send(manifest);
    });

    scope.get('/d/:slug/download', { config: PUBLIC, schema: schema('Download the signed package', 'Counted against the link’s quota when the download starts at byte 0; supports Range.') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const opened = await open(request, reply, slug);
      if (!opened) return reply;
      const personal = await personalize(opened.release, enrollmentOf(request));
      const { distribution, task } = personal.release;
      // A resumed download (Range from a later byte) is the same download, not a new one.
      if (startsAtZero(request, task.artifact_size) && !(await distributions.countDownload(distribution))) {
        throw new AppError('download_quota_exceeded');
      }
      const ios = distribution.platform === 'ios';
      return sendFile(request, reply, {
        size: task.artifact_size,
        sha256: task.artifact_sha256 ?? distribution.id,
        fileName: downloadName(personal.release),
        contentType: ios ? 'application/octet-stream' : 'application/vnd.android.package-archive',
        open: (range) => (personal.open ? personal.open(range) : distributions.artifact(task, range)),
      });
    });

    scope.get('/d/:slug/icon.png', { config: PUBLIC, schema: schema('App icon (standard PNG)') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const release = await distributions.release(slug);
      const icon = await distributions.icon(release.distribution);
      if (!icon) throw new AppError('distribution_not_found', 'this app has no icon');
      return reply.type(icon.contentType).header('cache-control', 'public, max-age=86400').send(icon.body);
    });

    scope.get('/d/:slug/qr.svg', { config: PUBLIC, schema: schema('QR code of the install page (SVG)') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const { url } = distributions.links((await distributions.release(slug)).distribution);
      return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(await qrSvg(url));
    });

    scope.get('/d/:slug/qr.png', { config: PUBLIC, schema: schema('QR code of the install page (PNG)') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const { url } = distributions.links((await distributions.release(slug)).distribution);
      return reply.type('image/png').header('cache-control', 'public, max-age=86400').send(await qrPng(url));
    });

    scope.get('/a/:slug', { config: PUBLIC, schema: schema("App's permanent link", 'The install page of the app’s newest release.') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const { release } = await distributions.latestRelease(slug);
      // The newest release may be protected: send the visitor to its own page, which asks.
      if (release.distribution.password_hash !== null) return reply.code(303).header('location', `/d/${release.distribution.slug}`).send();
      const reason = distributions.unavailable(release.distribution);
      if (reason) throw new AppError(reason);
      return sendPage(reply, 200, await installPage(request, release, null, `/a/${slug}/history`));
    });

    scope.get('/a/:slug/history', { config: PUBLIC, schema: schema('Version history of an app') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const history = await distributions.history(slug);
      const rows = history.releases.map((release) => ({
        version: release.task.app_version,
        build: release.task.app_build,
        date: new Date(release.task.finished_at ?? release.distribution.created_at),
        url: `/d/${release.distribution.slug}`,
        available: distributions.unavailable(release.distribution) === null,
      }));
      return sendPage(reply, 200, renderHistoryPage(history.appName ?? 'App', rows));
    });
  });

  /** A super release as one device sees it (its own build and how to read it); other releases unchanged. */
  async function personalize(release: Release, enrollment: string | undefined): Promise<{ release: Release; open: ArtifactOpener | null }> {
    if (release.task.cert_type !== 'super') return { release, open: null };
    if (!deps.enrollments) throw new AppError('super_signing_unavailable');
    return deps.enrollments.personalize(release, enrollment);
  }

  /** `manifestUrl`: the release's manifest URL, with the visitor's token when the link is protected. */
  async function superAction(request: FastifyRequest, release: Release, manifestUrl: string | null, visitor: Visitor) {
    if (release.task.cert_type !== 'super') return null;
    if (!deps.enrollments) throw new AppError('super_signing_unavailable');
    const status = await deps.enrollments.status(release, enrollmentOf(request));
    return renderSuperSection({
      pagePath: `/d/${release.distribution.slug}`,
      manifestUrl: status && manifestUrl ? withEnrollment(manifestUrl, status.enrollment.id) : null,
      status,
      visitor,
    });
  }

  async function installPage(request: FastifyRequest, release: Release, token: string | null, historyUrl: string | null = null): Promise<string> {
    const { distribution, task } = release;
    const links = withToken(distributions.links(distribution), token);
    const visitor = classifyUserAgent(request.headers['user-agent']);
    const ios = distribution.platform === 'ios';
    const appLink = task.app_id ? await distributions.appLinkUrl(task.app_id) : null;
    const personal = await superAction(request, release, links.manifest_url, visitor);
    return renderInstallPage(
      {
        app: {
          name: appName(release),
          version: task.app_version,
          build: task.app_build,
          bundleId: task.bundle_id,
          platform: distribution.platform,
          sizeBytes: task.artifact_size,
          releasedAt: new Date(task.finished_at ?? distribution.created_at),
          iconUrl: distribution.icon_blob_key ? `/d/${distribution.slug}/icon.png` : null,
        },
        pageUrl: links.url,
        qrSvg: await qrSvg(links.url),
        installUrl: ios ? itmsServicesUrl(links.manifest_url!) : links.download_url,
        enterpriseTrust: ios && task.cert_type === 'enterprise' ? { organization: await distributions.organization(task) } : null,
        historyUrl: historyUrl ?? (appLink ? `${appLink}/history` : null),
        insecure: !deps.secure,
        superAction: personal,
      },
      visitor,
    );
  }
}

function enrollmentOf(request: FastifyRequest): string | undefined {
  const value = (request.query as { enrollment?: unknown }).enrollment;
  return typeof value === 'string' ? value : undefined;
}

function withToken<T extends { download_url: string; manifest_url: string | null; url: string }>(links: T, token: string | null): T {
  if (token === null) return links;
  const add = (url: string) => `${url}?t=${encodeURIComponent(token)}`;
  return { ...links, download_url: add(links.download_url), manifest_url: links.manifest_url && add(links.manifest_url) };
}

function appName(release: Release): string {
  return release.task.app_name ?? release.task.bundle_id ?? release.task.input_filename.replace(/\.(ipa|apk)$/i, '');
}

function downloadName(release: Release): string {
  const { task } = release;
  const base = (task.app_name ?? task.bundle_id ?? 'app').replace(/[^\w.-]+/g, '-');
  return `${base}${task.app_version ? `-${task.app_version}` : ''}.${task.platform === 'ios' ? 'ipa' : 'apk'}`;
}

/**
 * Whether a visitor may use a link: an open link always (no token), a protected one with a valid
 * access token from `?t=` (iOS fetches the manifest and download without Safari's cookies) or
 * the page's cookie. Null: the visitor must give the password first.
 */
export function accessOf(request: FastifyRequest, linkKey: Buffer, distribution: Release['distribution']): { token: string | null } | null {
  const hash = distribution.password_hash;
  if (hash === null) return { token: null };
  const token = (request.query as { t?: string }).t ?? cookie(request, cookieName(distribution.slug));
  return token !== undefined && checkAccessToken(linkKey, distribution.slug, hash, token) ? { token } : null;
}

function cookieName(slug: string): string {
  return `signet_${slug}`;
}

function cookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(body);
}
