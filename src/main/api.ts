// The API process: the HTTP app (API v1, console, install pages) over the shared domain. It
// listens, then tells the domain the real public base URL (config.port may be 0).
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { sql } from 'kysely';
import { publicBaseUrl } from '../config.ts';
import { buildHttpApp } from '../http/app.ts';
import { openResumableStore } from '../storage/resumable-store.ts';
import { AccountDeletionService } from '../services/account-deletion.ts';
import { InvitationService } from '../services/invitations.ts';
import { SessionService } from '../services/sessions.ts';
import { SetupService } from '../services/setup.ts';
import { UserService } from '../services/users.ts';
import type { Domain } from './domain.ts';

export interface ApiOverrides {
  /** fastify logger option; default: JSON logs on stdout at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /**
   * Called with the one-time setup link while no console user exists (default: printed on the
   * terminal, i.e. stderr, not into the JSON log stream on stdout).
   */
  onSetupLink?: (url: string) => void;
  /** The console's build folder (null: no console). */
  consoleDir: string | null;
  /** Resumable uploads: how long an unfinished one lives and how often expired ones are swept (tests). */
  resumable?: { expirationMs?: number; sweepIntervalMs?: number };
}

export interface RunningApi {
  app: FastifyInstance;
  /** e.g. http://127.0.0.1:8080 (the actual port when config.port is 0). */
  url: string;
  /** Stops taking requests (uploads in flight are aborted by the app's preClose hook). */
  close(): Promise<void>;
}

/** Builds the HTTP app; `listen` then serves it (the worker, if any, is started in between). */
export async function buildApi(domain: Domain, overrides: ApiOverrides): Promise<{ app: FastifyInstance; listen(): Promise<RunningApi> }> {
  const { config, db, base } = domain;
  const setup = new SetupService({ db });
  // First run: no user yet. A fresh one-time link on every start until the owner exists.
  const setupToken = await setup.issueToken();
  const baseUrl = () => base.url;
  const consoleDeps = {
    db,
    apiKeys: domain.apiKeys,
    users: new UserService({ db, baseUrl }),
    setup,
    webhooks: domain.webhooks,
    invitations: new InvitationService({ db, baseUrl }),
    accountDeletion: new AccountDeletionService({ db, blobs: domain.blobs, tasks: domain.tasks, log: (message, error) => domain.log.warn({ err: error }, message) }),
    sessions: new SessionService({ db, settings: config.session, csrfKey: db.secretBox.deriveKey('console-csrf-tokens') }),
    limits: config.signInLimit,
    dir: overrides.consoleDir,
  };
  const logger = overrides.logger ?? (config.logLevel === 'silent' ? false : { level: config.logLevel });
  const https = config.tls ? { cert: await readFile(config.tls.certFile), key: await readFile(config.tls.keyFile) } : null;
  const { app } = await buildHttpApp({
    authenticate: (token) => domain.apiKeys.authenticate(token),
    uploads: domain.uploads,
    tasks: domain.tasks,
    certificates: domain.certificates,
    events: domain.events,
    rotations: domain.rotations,
    apps: domain.apps,
    distributions: domain.distributions,
    developerAccounts: domain.developerAccounts,
    enrollments: domain.enrollments,
    linkKey: db.secretBox.deriveKey('install-link-tokens'),
    ready: async () => {
      // A round trip, not a table read: probes come every few seconds.
      await sql`select 1`.execute(db.kysely);
      await domain.blobs.exists('readyz/probe');
      return { database: 'ok', storage: 'ok' };
    },
    get baseUrl() {
      return base.url;
    },
    maxUploadBytes: config.maxUploadBytes,
    // Unfinished resumable uploads live as long as a file_key would.
    resumable: () => openResumableStore(config, overrides.resumable?.expirationMs ?? config.fileKeyTtlSeconds * 1000),
    ...(overrides.resumable?.sweepIntervalMs ? { resumableSweepMs: overrides.resumable.sweepIntervalMs } : {}),
    rateLimit: config.rateLimit,
    publicRateLimit: config.publicRateLimit,
    passwordAttempts: config.passwordAttempts,
    connectionLimits: config.limits,
    trustProxy: config.trustProxy,
    metrics: { metrics: domain.metrics, token: config.metricsToken },
    logger,
    https,
    console: consoleDeps,
  });
  domain.attachLogger(app.log);

  const listen = async (): Promise<RunningApi> => {
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    base.url = publicBaseUrl({ ...config, port });
    if (domain.profileSigner === null) {
      app.log.warn('UDID-capture profiles are served unsigned (iOS shows "Not Signed"): set SIGNET_PROFILE_SIGNING_CERT and SIGNET_PROFILE_SIGNING_KEY, or SIGNET_TLS_CERT and SIGNET_TLS_KEY');
    }
    if (!base.url.startsWith('https://')) {
      // iOS refuses itms-services installs over plain HTTP.
      app.log.warn(
        { public_url: base.url },
        'iOS install links need HTTPS: set SIGNET_PUBLIC_URL to the https:// address of a TLS reverse proxy, or SIGNET_TLS_CERT and SIGNET_TLS_KEY',
      );
    }
    if (setupToken !== null) {
      const link = `${base.url}/setup?token=${setupToken}`;
      (overrides.onSetupLink ?? ((url) => process.stderr.write(`\nSignet has no users yet. Open this one-time link to create the owner (valid for 24 hours):\n\n  ${url}\n\nHeadless install instead: signet users create --email you@example.com --account default --password-stdin\n\n`)))(link);
    }
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return { app, url, close: () => app.close() };
  };
  return { app, listen };
}
