// The HTTP app factory: builds a fastify instance from already-constructed services. It opens no
// files and no ports; src/main decides where it listens. Plugins are installed in order: request
// ids and logging (fastify options), errors, strict validation, slow-client guards, metrics,
// security headers, cookies, auth, rate limits, multipart, OpenAPI collection, then the routes.
import type { AccountEventService } from '../services/account-events.ts';
import { accountWebhookRoutes } from './routes/account-webhooks.ts';
import { rotationRoutes } from './routes/rotations.ts';
import type { RotationService } from '../services/rotations.ts';
import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { DistributionService } from '../distribution/service.ts';
import type { EnrollmentService } from '../super-signature/enrollment.ts';
import type { DeveloperAccountService } from '../services/developer-accounts.ts';
import type { AppService } from '../services/apps.ts';
import type { CertificateService } from '../services/certificates.ts';
import type { TaskService } from '../services/tasks.ts';
import type { UploadService } from '../services/uploads.ts';
import type { Metrics } from '../services/metrics.ts';
import { InFlight } from './in-flight.ts';
import { DOCS_PREFIX, finishOpenApi, SWAGGER_OPTIONS } from './openapi.ts';
import { consoleRoutes } from './console-static.ts';
import { installAuth, type Authenticate } from './plugins/auth.ts';
import { installRateLimits, PasswordThrottle, type RateLimitSettings } from './limits.ts';
import { installConnectionGuard, type ConnectionLimits } from './plugins/connection-guard.ts';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './plugins/errors.ts';
import { contentSecurityPolicy, installSecurityHeaders } from './plugins/security-headers.ts';
import { installStrictValidation } from './plugins/strict-validation.ts';
import { accountRoutes, type AccountRouteDeps } from './routes/account.ts';
import { appRoutes } from './routes/apps.ts';
import { certificateRoutes } from './routes/certificates.ts';
import { developerAccountRoutes } from './routes/developer-accounts.ts';
import { distributionRoutes } from './routes/distributions.ts';
import { installPageRoutes } from './routes/install-pages.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { opsRoutes, type ReadinessCheck } from './routes/ops.ts';
import { pageAssetRoutes } from './routes/page-assets.ts';
import { sessionRoutes, type SessionRouteDeps } from './routes/session.ts';
import { taskRoutes } from './routes/tasks.ts';
import { resumableUploadRoutes } from './routes/resumable-uploads.ts';
import type { ResumableStore } from '../storage/resumable-store.ts';
import { uploadRoutes } from './routes/uploads.ts';
import { udidRoutes } from './routes/udid.ts';

export interface HttpDeps {
  authenticate: Authenticate;
  uploads: UploadService;
  tasks: TaskService;
  certificates: CertificateService;
  /** Account webhooks and events (/v1/webhooks, /v1/events). */
  events?: AccountEventService;
  /** Certificate rotation (/v1/certificates/{id}/rotate, /v1/rotations). */
  rotations?: RotationService;
  apps: AppService;
  distributions: DistributionService;
  /** Super signature: Apple developer accounts and device enrollments (routes absent without them). */
  developerAccounts?: DeveloperAccountService;
  enrollments?: EnrollmentService;
  /** HMAC key of access tokens for password-protected install links. */
  linkKey: Buffer;
  ready: ReadinessCheck;
  /** Public base URL (no trailing slash), for links and the OpenAPI servers. */
  baseUrl: string;
  maxUploadBytes: number;
  /** Opens where resumable (tus) uploads collect their bytes (on first use); absent: no /v1/uploads routes. */
  resumable?: () => Promise<ResumableStore>;
  /** How often expired resumable uploads are removed (default hourly). */
  resumableSweepMs?: number;
  /** Per API key or console session (SIGNET_RATE_LIMIT). */
  rateLimit: RateLimitSettings['perKey'];
  /** Per client address on public routes, and failed install-link passwords (defaults: 120/min, 10/min). */
  publicRateLimit?: RateLimitSettings['publicRequests'];
  passwordAttempts?: RateLimitSettings['passwordFailures'];
  /** Slow-client limits (defaults: 20 s headers, 30 s body stall, 4 KiB/s, 64 connections per address). */
  connectionLimits?: Partial<ConnectionLimits> & { headersTimeoutMs?: number };
  /** fastify's trustProxy (client addresses from X-Forwarded-For). */
  trustProxy?: boolean | number | string[];
  /** Prometheus metrics; served at /metrics when `token` is set. */
  metrics?: { metrics: Metrics; token: string | null };
  /** fastify's logger option: `false`, or pino options (level, stream). */
  logger: FastifyServerOptions['logger'];
  https?: { cert: Buffer; key: Buffer } | null;
  /** Console users, sessions and account settings, and the console's build folder (absent: API keys only). */
  console?: Omit<SessionRouteDeps, 'secureCookies'> & AccountRouteDeps & { dir: string | null };
}

export interface HttpApp {
  app: FastifyInstance;
  /** Uploads in progress; aborted on close. */
  inFlight: InFlight;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** Logged request fields: never headers (Authorization) nor bodies (files, passwords). */
const serializers = {
  req: (req: { method: string; url: string; ip?: string; socket?: { remoteAddress?: string } }) => ({
    method: req.method,
    url: req.url.split('?')[0],
    remote: req.ip ?? req.socket?.remoteAddress,
  }),
  res: (res: { statusCode: number }) => ({ status: res.statusCode }),
};

export async function buildHttpApp(deps: HttpDeps): Promise<HttpApp> {
  const logger = deps.logger && typeof deps.logger === 'object' ? { ...deps.logger, serializers, redact: ['req.headers.authorization', 'password'] } : deps.logger;
  const options: FastifyServerOptions = {
    logger,
    // A client-supplied X-Request-Id is kept when it is a plain token (it ends up in logs).
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomBytes(9).toString('base64url')}`;
    },
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // Uploads of 2 GiB over slow links take long, so there is no whole-request timeout; bodies must
    // keep moving instead (connection-guard.ts), and headers must arrive within headersTimeout.
    requestTimeout: 0,
    // A socket with no traffic at all for this long is closed (keep-alive idling has its own, shorter, keepAliveTimeout).
    connectionTimeout: 120_000,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // fastify accepts a hop count too (its type declarations omit it).
    trustProxy: (deps.trustProxy ?? false) as FastifyServerOptions['trustProxy'],
    frameworkErrors,
    clientErrorHandler,
  };
  const limits: ConnectionLimits & { headersTimeoutMs: number } = {
    headersTimeoutMs: 20_000,
    bodyIdleMs: 30_000,
    minBodyBytesPerSecond: 4096,
    bodyGraceMs: 10_000,
    maxConnectionsPerAddress: 64,
    ...deps.connectionLimits,
  };
  // Node checks header timeouts every connectionsCheckingInterval (30 s by default): check often
  // enough that the timeout means what it says.
  const server = { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) };
  const app: FastifyInstance = deps.https
    ? Fastify({ ...options, https: { ...deps.https, ...server } } as FastifyServerOptions)
    : Fastify({ ...options, http: server } as FastifyServerOptions);
  const inFlight = new InFlight();
  let closing = false;

  // Routes by pattern, for 405 Method Not Allowed with an Allow header.
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`);
    routes.push({ pattern, methods });
  });
  const allows = (_method: string, path: string): string[] => [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))];

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // POST bodies without a content type are read as JSON (curl -d without -H, some CI tools);
    // a body that is not JSON then fails as invalid_request.
    if (request.method === 'POST' && request.headers['content-type'] === undefined && (request.headers['content-length'] ?? '0') !== '0') {
      request.headers['content-type'] = 'application/json';
    }
  });
  app.addHook('preClose', async () => {
    closing = true;
    inFlight.abortAll();
  });

  // Only JSON and multipart bodies exist in this API; text/plain is refused with 415.
  app.removeContentTypeParser('text/plain');
  installErrorHandling(app, allows);
  installStrictValidation(app);
  const refused = (limit: string) => deps.metrics?.metrics.refusals.inc({ limit });
  installConnectionGuard(app, limits, refused);
  if (deps.metrics) {
    const { httpDuration } = deps.metrics.metrics;
    app.addHook('onResponse', async (request, reply) => {
      httpDuration.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    });
  }
  const secureCookies = deps.baseUrl.startsWith('https://');
  await installSecurityHeaders(app, { https: secureCookies || Boolean(deps.https) });
  await app.register(cookie);
  const auth = installAuth(app, { authenticate: deps.authenticate, sessions: deps.console?.sessions, secureCookies });
  const rateLimits: RateLimitSettings = {
    perKey: deps.rateLimit,
    publicRequests: deps.publicRateLimit ?? { max: 120, windowMs: 60_000 },
    passwordFailures: deps.passwordAttempts ?? { max: 10, windowMs: 60_000 },
  };
  // Also what the console's sign-in throttle (routes/session.ts) builds on.
  await installRateLimits(app, rateLimits, refused);
  await app.register(multipart, { throwFileSizeLimit: false });
  await app.register(swagger, SWAGGER_OPTIONS as never);
  // /docs: swagger-ui (maintained, served from its own files, no CDN) showing the same document
  // as /v1/openapi.json. Public, under the pages' strict CSP (its scripts are files of 'self').
  app.addHook('onRoute', (route) => {
    if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) route.config = { ...route.config, public: true };
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    staticCSP: contentSecurityPolicy(),
    uiConfig: { deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0, displayRequestDuration: true },
    theme: { title: 'Signet API reference' },
    transformSpecification: (spec: Record<string, unknown>) => finishOpenApi(spec, deps.baseUrl, auth),
  });

  opsRoutes(app, { ready: deps.ready, baseUrl: () => deps.baseUrl, isClosing: () => closing, auth });
  if (deps.console) {
    sessionRoutes(app, { ...deps.console, secureCookies });
    accountRoutes(app, deps.console);
    await consoleRoutes(app, { dir: deps.console.dir });
  }
  uploadRoutes(app, { uploads: deps.uploads, maxUploadBytes: deps.maxUploadBytes, inFlight });
  if (deps.resumable) {
    resumableUploadRoutes(app, {
      uploads: deps.uploads,
      store: deps.resumable,
      maxUploadBytes: deps.maxUploadBytes,
      inFlight,
      ...(deps.resumableSweepMs ? { sweepIntervalMs: deps.resumableSweepMs } : {}),
      log: (error, message) => app.log.error({ err: error }, message),
    });
  }
  taskRoutes(app, deps.tasks, () => deps.baseUrl, inFlight);
  certificateRoutes(app, deps.certificates);
  if (deps.events) accountWebhookRoutes(app, deps.events);
  if (deps.rotations) rotationRoutes(app, deps.rotations);
  appRoutes(app, deps.apps, () => deps.baseUrl);
  distributionRoutes(app, deps.distributions);
  if (deps.developerAccounts) developerAccountRoutes(app, deps.developerAccounts);
  pageAssetRoutes(app);
  await installPageRoutes(app, {
    distributions: deps.distributions,
    linkKey: deps.linkKey,
    secure: deps.baseUrl.startsWith('https://'),
    passwords: new PasswordThrottle(rateLimits.passwordFailures),
    ...(deps.enrollments ? { enrollments: deps.enrollments } : {}),
  });
  if (deps.metrics?.token) metricsRoutes(app, { metrics: deps.metrics.metrics, token: deps.metrics.token });
  if (deps.enrollments) await udidRoutes(app, { distributions: deps.distributions, enrollments: deps.enrollments, linkKey: deps.linkKey, secure: deps.baseUrl.startsWith('https://') });
  await app.ready();
  return { app, inFlight };
}
