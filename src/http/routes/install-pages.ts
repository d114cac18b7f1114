// Public install links (no API key): the page, its manifest, the download, icon and QR codes, the
// app's permanent link and version history. Pages are in the visitor's language
// (public-pages.ts); failures render HTML pages a tester can understand, and links that stopped
// working still name their app unless they are password protected. The status codes still come
// from the catalogue (src/http/error-status.ts). Link-preview agents get an Open Graph card and
// are never counted; a download counts once, when it starts at byte 0 (not HEAD, not a Range
// continuation), and a client whose counted download started may resume it after the quota filled.
import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TaskRow } from '../../db/schema.ts';
import { checkAccessToken, deviceCookieValue, deviceFromCookie, issueAccessToken, verifyPassword } from '../../distribution/access.ts';
import { formatSize, messages, type Language } from '../../distribution/i18n/index.ts';
import { isLinkPreview, type PreviewModel } from '../../distribution/link-preview.ts';
import { buildManifest, itmsServicesUrl } from '../../distribution/manifest.ts';
import { renderHistoryPage } from '../../distribution/pages/history-page.ts';
import { renderInstallPage } from '../../distribution/pages/install-page.ts';
import { renderMessagePage } from '../../distribution/pages/message-page.ts';
import { renderPasswordPage } from '../../distribution/pages/password-page.ts';
import { renderPreviewPage } from '../../distribution/pages/preview-page.ts';
import { qrPng, qrSvg } from '../../distribution/qr.ts';
import type { DistributionService, Release, UnavailableReason } from '../../distribution/service.ts';
import { classifyUserAgent, type Visitor } from '../../distribution/user-agent.ts';
import type { ArtifactOpener, EnrollmentService } from '../../super-signature/enrollment.ts';
import { renderSuperSection, withEnrollment } from '../../super-signature/install-section.ts';
import { AppError } from '../../errors.ts';
import type { PasswordThrottle } from '../limits.ts';
import { sendErrorAsPage } from '../plugins/errors.ts';
import { cookie, pageLanguage, sendPage } from '../public-pages.ts';
import { parseRange } from '../range.ts';
import { sendFile } from '../send-file.ts';

export interface InstallPageDeps {
  distributions: DistributionService;
  /** HMAC key for access tokens of password-protected links (and download-client keys). */
  linkKey: Buffer;
  /** The public URL is https (cookies get `Secure`; iOS installs can work). */
  secure: boolean;
  /** Super signature: per-device builds behind `?enrollment=` (absent: super links cannot install). */
  enrollments?: EnrollmentService;
  /** Failed-password lockouts per link and visitor address. */
  passwords: PasswordThrottle;
}

/** A link that exists but may not be used now: its page still names the app unless protected. */
class UnavailableLink extends AppError {
  readonly release: Release;
  constructor(code: UnavailableReason, release: Release) {
    super(code);
    this.release = release;
  }
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

    // Every public handler answers with HTML pages (catalogue code in Signet-Error), never JSON;
    // a link that exists but may not be used now still names its app unless it is protected.
    scope.setErrorHandler(async (error, request, reply) => {
      const release = error instanceof UnavailableLink ? error.release : null;
      const app = release && release.distribution.password_hash === null ? { name: appName(release), version: release.task.app_version, iconUrl: iconPath(release) } : null;
      return sendErrorAsPage(request, reply, error, { secure: deps.secure, app });
    });

    /** The release behind a slug when it may be used now; refused with the reason otherwise. */
    const usable = async (slug: string): Promise<Release> => {
      const release = await distributions.release(slug);
      const reason = distributions.unavailable(release.distribution);
      if (reason) throw new UnavailableLink(reason, release);
      return release;
    };

    scope.get('/d/:slug', { config: PUBLIC, schema: schema('Install page', 'HTML page in the visitor’s language, adapted to their device: install button, QR code, what the build requires, guidance.') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const language = pageLanguage(request, reply, deps.secure);
      if (previewing(request)) return sendPage(reply, 200, renderPreviewPage(language, preview(await distributions.release(slug), language)));
      const release = await usable(slug);
      const access = accessOf(request, linkKey, release.distribution);
      if (!access) {
        reply.header('signet-error', 'password_required');
        return sendPage(reply, 401, renderPasswordPage({ language, requestUrl: request.url, action: `/d/${slug}`, wrongPassword: false }));
      }
      return sendPage(reply, 200, await installPage(request, language, release, access.token, null, await knownDevice(request, reply, release)));
    });

    scope.post('/d/:slug', { config: PUBLIC, schema: schema('Unlock a password-protected install page') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const language = pageLanguage(request, reply, deps.secure);
      const release = await usable(slug);
      const hash = release.distribution.password_hash;
      const password = (request.body as { password?: unknown } | undefined)?.password;
      if (hash !== null) {
        // Locked out after too many wrong guesses: no scrypt is spent, the page says when to retry.
        deps.passwords.check(slug, request.ip);
        if (typeof password !== 'string' || !(await verifyPassword(password, hash))) {
          deps.passwords.failed(slug, request.ip);
          reply.header('signet-error', 'password_required');
          return sendPage(reply, 401, renderPasswordPage({ language, requestUrl: request.url, action: `/d/${slug}`, wrongPassword: true }));
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
      const opened = await usable(slug);
      const access = accessOf(request, linkKey, opened.distribution);
      if (!access) throw new AppError('password_required');
      const enrollment = enrollmentOf(request);
      const { release } = await personalize(opened, enrollment);
      if (release.distribution.platform !== 'ios') throw new AppError('distribution_not_found', 'Android apps have no OTA manifest');
      const links = withToken(distributions.links(release.distribution), access.token);
      const manifest = buildManifest({
        ipaUrl: withEnrollment(links.download_url, enrollment),
        ipaSha256: release.task.artifact_sha256,
        iconUrl: release.distribution.icon_blob_key ? links.icon_url : null,
        bundleId: release.task.bundle_id ?? '',
        version: release.task.app_version,
        title: appName(release),
      });
      // Manifests can carry per-visitor tokens: never cache them (distribution-protocols.md §1.3).
      return reply.type('text/xml; charset=utf-8').header('cache-control', 'no-store').send(manifest);
    });

    scope.get('/d/:slug/download', {
      config: PUBLIC,
      schema: schema(
        'Download the signed package',
        'Counted against the link’s quota once, when a GET starts at byte 0; HEAD requests, Range continuations and link-preview agents are never counted (previews get an Open Graph page instead of the file). A client whose counted download started may resume it with Range after the quota filled. Supports Range.',
      ),
    }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const release = await distributions.release(slug);
      if (previewing(request)) {
        const language = pageLanguage(request, reply, deps.secure);
        return sendPage(reply, 200, renderPreviewPage(language, preview(release, language)));
      }
      if (!accessOf(request, linkKey, release.distribution)) throw new AppError('password_required');
      const personal = await personalize(release, enrollmentOf(request));
      const { distribution, task } = personal.release;
      const sha256 = task.artifact_sha256 ?? distribution.id;
      // A continuation asks for a later part of this very file; with a stale If-Range it would
      // get the whole file (send-file.ts), so it is a new download then.
      const range = parseRange(request.headers.range, task.artifact_size);
      const ifRange = request.headers['if-range'];
      const continuation = range !== null && range !== 'unsatisfiable' && range.start > 0 && (ifRange === undefined || ifRange === `"${sha256}"`);
      const client = clientKey(request);
      const reason = distributions.unavailable(release.distribution);
      // The quota limits downloads started, not bytes: a started download may finish.
      if (reason && !(reason === 'download_quota_exceeded' && continuation && (await distributions.mayResume(release.distribution, client)))) {
        throw new UnavailableLink(reason, release);
      }
      if (request.method === 'GET' && !continuation && !(await distributions.countDownload(release.distribution, client))) {
        throw new UnavailableLink('download_quota_exceeded', release);
      }
      const ios = distribution.platform === 'ios';
      return sendFile(request, reply, {
        size: task.artifact_size,
        sha256,
        fileName: downloadName(personal.release),
        contentType: ios ? 'application/octet-stream' : 'application/vnd.android.package-archive',
        open: (byteRange) => (personal.open ? personal.open(byteRange) : distributions.artifact(task, byteRange)),
      });
    });

    scope.get('/d/:slug/icon.png', { config: PUBLIC, schema: schema('App icon (standard PNG)', 'Of a password-protected link only with its access token (`?t=` or the page cookie).') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const release = await distributions.release(slug);
      if (!accessOf(request, linkKey, release.distribution)) throw new AppError('password_required');
      const icon = await distributions.icon(release.distribution);
      if (!icon) throw new AppError('distribution_not_found', 'this app has no icon');
      const cache = release.distribution.password_hash === null ? 'public, max-age=86400' : 'private, max-age=3600';
      return reply.type(icon.contentType).header('cache-control', cache).send(icon.body);
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

    scope.get('/a/:slug', { config: PUBLIC, schema: schema("App's permanent link", 'The install page of the app’s newest release that can be installed.') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const language = pageLanguage(request, reply, deps.secure);
      const { release, unavailable } = await distributions.latestRelease(slug);
      if (previewing(request)) return sendPage(reply, 200, renderPreviewPage(language, preview(release, language, `${distributions.baseUrl}/a/${slug}`)));
      if (unavailable) throw new UnavailableLink(unavailable, release);
      // The release may be protected: send the visitor to its own page, which asks.
      if (release.distribution.password_hash !== null) return reply.code(303).header('location', `/d/${release.distribution.slug}`).send();
      return sendPage(reply, 200, await installPage(request, language, release, null, `/a/${slug}/history`, await knownDevice(request, reply, release)));
    });

    scope.get('/a/:slug/qr.svg', { config: PUBLIC, schema: schema("QR code of the app's permanent link (SVG)") }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      await distributions.latestRelease(slug);
      return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(await qrSvg(`${distributions.baseUrl}/a/${slug}`));
    });

    scope.get('/a/:slug/history', { config: PUBLIC, schema: schema('Version history of an app', 'Each release once, newest first, with its state: available, password protected, expired, disabled or download limit reached.') }, async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const language = pageLanguage(request, reply, deps.secure);
      const history = await distributions.history(slug);
      const face = history.releases.find(({ release }) => release.distribution.password_hash === null && release.distribution.icon_blob_key !== null)?.release;
      return sendPage(reply, 200, renderHistoryPage({
        language,
        requestUrl: request.url,
        appName: history.appName ?? (history.releases[0] ? appName(history.releases[0].release) : 'App'),
        iconUrl: face ? iconPath(face) : null,
        rows: history.releases.map(({ release, state }) => ({
          version: release.task.app_version,
          build: release.task.app_build,
          date: new Date(release.task.finished_at ?? release.distribution.created_at),
          url: `/d/${release.distribution.slug}`,
          state,
          notes: notesOf(release.task),
        })),
      }));
    });
  });

  /** A super release as one device sees it (its own build and how to read it); other releases unchanged. */
  async function personalize(release: Release, enrollment: string | undefined): Promise<{ release: Release; open: ArtifactOpener | null }> {
    if (release.task.cert_type !== 'super') return { release, open: null };
    if (!deps.enrollments) throw new AppError('super_signing_unavailable');
    return deps.enrollments.personalize(release, enrollment);
  }

  /** `manifestUrl`: the release's manifest URL, with the visitor's token when the link is protected. */
  async function superAction(request: FastifyRequest, language: Language, release: Release, manifestUrl: string | null, visitor: Visitor) {
    if (release.task.cert_type !== 'super') return null;
    if (!deps.enrollments) throw new AppError('super_signing_unavailable');
    const status = await deps.enrollments.status(release, enrollmentOf(request));
    return renderSuperSection({
      language,
      pagePath: `/d/${release.distribution.slug}`,
      manifestUrl: status && manifestUrl ? withEnrollment(manifestUrl, status.enrollment.id) : null,
      status,
      visitor,
    });
  }

  /**
   * The visitor's device when Signet knows it: from this page's enrollment (which then sets the
   * device cookie for the other pages) or from that cookie.
   */
  async function knownDevice(request: FastifyRequest, reply: FastifyReply, release: Release): Promise<string | null> {
    const enrollment = enrollmentOf(request);
    if (deps.enrollments && enrollment !== undefined) {
      const udid = (await deps.enrollments.status(release, enrollment))?.enrollment.udid ?? null;
      if (udid !== null) {
        reply.header('set-cookie', `${DEVICE_COOKIE}=${deviceCookieValue(linkKey, udid)}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax${deps.secure ? '; Secure' : ''}`);
        return udid;
      }
    }
    return deviceFromCookie(linkKey, cookie(request, DEVICE_COOKIE));
  }

  async function installPage(request: FastifyRequest, language: Language, release: Release, token: string | null, historyUrl: string | null = null, device: string | null = null): Promise<string> {
    const { distribution, task } = release;
    const links = withToken(distributions.links(distribution), token);
    const visitor = classifyUserAgent(request.headers['user-agent']);
    const ios = distribution.platform === 'ios';
    const appLink = task.app_id ? await distributions.appLinkUrl(task.app_id) : null;
    const personal = await superAction(request, language, release, links.manifest_url, visitor);
    // Ad-hoc and development builds install on the devices their profiles list, without the trust step.
    const provisioned = ios ? await distributions.provisionedDevices(task) : null;
    return renderInstallPage(
      {
        language,
        requestUrl: request.url,
        app: {
          name: appName(release),
          version: task.app_version,
          build: task.app_build,
          bundleId: task.bundle_id,
          platform: distribution.platform,
          sizeBytes: task.artifact_size,
          releasedAt: new Date(task.finished_at ?? distribution.created_at),
          iconUrl: distribution.icon_blob_key ? relative(links.icon_url) : null,
        },
        requirements: distributions.requirements(distribution),
        notes: notesOf(task),
        downloads: { count: distribution.downloads, max: distribution.max_downloads },
        expiresAt: distribution.expires_at === null ? null : new Date(distribution.expires_at),
        pageUrl: links.url,
        qrSvg: await qrSvg(links.url, messages(language).qrLabel),
        installUrl: ios ? itmsServicesUrl(links.manifest_url!) : links.download_url,
        enterpriseTrust: ios && task.cert_type === 'enterprise' && provisioned === null ? { organization: await distributions.organization(task) } : null,
        historyUrl: historyUrl ?? (appLink ? `${appLink}/history` : null),
        insecure: !deps.secure,
        notProvisioned: provisioned !== null && device !== null && !provisioned.has(device.toUpperCase()),
        superAction: personal,
        preview: token === null ? preview(release, language) : null,
      },
      visitor,
    );
  }

  /** The Open Graph card of a release: name, icon and version, or nothing of a protected link. */
  function preview(release: Release, language: Language, url?: string): PreviewModel {
    const t = messages(language);
    const links = distributions.links(release.distribution);
    if (release.distribution.password_hash !== null) {
      return { url: url ?? links.url, title: t.previewProtected, description: t.previewProtected, imageUrl: null, language };
    }
    const { task } = release;
    const description = [
      task.app_version ? t.version(task.app_version, task.app_build && task.app_build !== task.app_version ? task.app_build : null) : null,
      release.distribution.platform === 'ios' ? t.platformIos : t.platformAndroid,
      formatSize(language, task.artifact_size),
    ].filter(Boolean).join(' · ');
    return {
      url: url ?? links.url,
      title: appName(release),
      description,
      imageUrl: release.distribution.icon_blob_key ? `${links.url}/icon.png` : null,
      language,
    };
  }

  /** An opaque, keyed digest of the client's address and user agent: who may resume a download. */
  function clientKey(request: FastifyRequest): string {
    return createHmac('sha256', linkKey).update(`download-client\n${request.ip}\n${request.headers['user-agent'] ?? ''}`).digest('base64url');
  }
}

function previewing(request: FastifyRequest): boolean {
  const purpose = request.headers['sec-purpose'] ?? request.headers.purpose ?? request.headers['x-purpose'];
  return isLinkPreview({ userAgent: request.headers['user-agent'], purpose: Array.isArray(purpose) ? purpose.join(',') : purpose });
}

function enrollmentOf(request: FastifyRequest): string | undefined {
  const value = (request.query as { enrollment?: unknown }).enrollment;
  return typeof value === 'string' ? value : undefined;
}

function withToken<T extends { download_url: string; manifest_url: string | null; url: string }>(links: T, token: string | null): T & { icon_url: string } {
  const add = (url: string) => (token === null ? url : `${url}?t=${encodeURIComponent(token)}`);
  return { ...links, download_url: add(links.download_url), manifest_url: links.manifest_url && add(links.manifest_url), icon_url: add(`${links.url}/icon.png`) };
}

function relative(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

function iconPath(release: Release): string | null {
  return release.distribution.icon_blob_key ? `/d/${release.distribution.slug}/icon.png` : null;
}

function appName(release: Release): string {
  return release.task.app_name ?? release.task.bundle_id ?? release.task.input_filename.replace(/\.(ipa|apk)$/i, '');
}

/** The release's notes (stored with its task), or null when it has none. */
function notesOf(task: TaskRow): string | null {
  return task.notes !== null && task.notes.trim() !== '' ? task.notes : null;
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

/** The visitor's device, as a UDID enrollment made it known (see deviceCookieValue). */
const DEVICE_COOKIE = 'signet_device';

function cookieName(slug: string): string {
  return `signet_${slug}`;
}
