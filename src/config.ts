// Configuration: every setting Signet reads from the environment, declared once with its default
// and description. `loadConfig` parses the environment a single time (in src/main) and the result
// is passed down; no other module reads process.env. The README's configuration table is checked
// against SETTINGS by a test, so the two cannot drift.
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string | null;
  databaseUrl: string | null;
  storage: 'disk' | 's3';
  s3: { bucket: string; region: string; endpoint: string | null; prefix: string; forcePathStyle: boolean };
  masterKey: string | null;
  fileKeyTtlSeconds: number;
  /** Keep the inputs of live releases past the file_key lifetime (rotation re-signs them). */
  keepLiveInputs: boolean;
  /** Certificate lifecycle: expiring threshold, OCSP re-check period and timeout. */
  lifecycle: { expiringDays: number; checkIntervalSeconds: number; ocspTimeoutMs: number };
  maxUploadBytes: number;
  rateLimit: { perSecond: number; burst: number };
  workerConcurrency: number;
  tls: { certFile: string; keyFile: string } | null;
  appleCaDir: string | null;
  ascBaseUrl: string;
  profileSigning: { certFile: string; keyFile: string } | null;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  session: { idleTimeoutSeconds: number; maxAgeSeconds: number };
  signInLimit: { perAddress: { max: number; windowSeconds: number }; perEmail: { max: number; windowSeconds: number } };
  /** fastify's trustProxy: false, true, a hop count, or trusted proxy addresses/CIDRs. */
  trustProxy: boolean | number | string[];
  publicRateLimit: { max: number; windowMs: number };
  passwordAttempts: { max: number; windowMs: number };
  limits: { headersTimeoutMs: number; bodyIdleMs: number; minBodyBytesPerSecond: number; maxConnectionsPerAddress: number };
  /** SIGNET_OUTBOUND_ALLOW as given (parsed by src/services/outbound.ts). */
  outboundAllow: string;
  quotas: { pendingTasks: number; storageBytes: number };
  metricsToken: string | null;
}

export class ConfigError extends Error {
  readonly code = 'config_invalid';
}

interface Setting {
  name: string;
  default: string;
  description: string;
}

/** The settings, in the order the README lists them. An empty default means "unset". */
export const SETTINGS: readonly Setting[] = [
  { name: 'SIGNET_PORT', default: '8080', description: 'TCP port of the HTTP(S) listener.' },
  { name: 'SIGNET_HOST', default: '0.0.0.0', description: 'Address to listen on.' },
  { name: 'SIGNET_DATA_DIR', default: './data', description: 'All local state: SQLite database, blobs on disk, master key file.' },
  { name: 'SIGNET_PUBLIC_URL', default: '', description: 'Public base URL used in install links (must be https:// for iOS installs). Defaults to http://localhost:PORT.' },
  { name: 'SIGNET_DATABASE_URL', default: '', description: 'postgres://… to use PostgreSQL and graphile-worker; unset uses SQLite in the data dir and the embedded queue.' },
  { name: 'SIGNET_STORAGE', default: 'disk', description: '`disk` (blobs under the data dir) or `s3`.' },
  { name: 'SIGNET_S3_BUCKET', default: '', description: 'Bucket for `SIGNET_STORAGE=s3`.' },
  { name: 'SIGNET_S3_REGION', default: 'us-east-1', description: 'S3 region.' },
  { name: 'SIGNET_S3_ENDPOINT', default: '', description: 'Endpoint of an S3-compatible server (MinIO, R2, …); unset for AWS.' },
  { name: 'SIGNET_S3_PREFIX', default: '', description: 'Key prefix for every object Signet writes.' },
  { name: 'SIGNET_S3_FORCE_PATH_STYLE', default: 'false', description: 'Path-style bucket addressing (most self-hosted S3 servers need `true`).' },
  { name: 'SIGNET_MASTER_KEY', default: '', description: '32-byte key (base64 or hex) encrypting private keys, passwords and profiles at rest. Unset: a 0600 key file is created in the data dir.' },
  { name: 'SIGNET_CERT_EXPIRING_DAYS', default: '30', description: 'A certificate or profile that expires within this many days has health `expiring`.' },
  { name: 'SIGNET_CERT_CHECK_INTERVAL', default: '86400', description: 'Seconds between the worker\'s checks of every certificate\'s health; revocation (OCSP) answers are reused until their nextUpdate.' },
  { name: 'SIGNET_OCSP_TIMEOUT', default: '5', description: 'Seconds to wait for an OCSP responder (or a CA certificate download); no answer in time gives health `unknown`, never `revoked`.' },
  { name: 'SIGNET_KEEP_LIVE_INPUTS', default: 'true', description: 'Keep an uploaded package past its file_key lifetime while a release signed from it has a live install link (enabled, unexpired), so certificate rotation can re-sign it; `false`: every upload follows SIGNET_FILE_KEY_TTL.' },
  { name: 'SIGNET_FILE_KEY_TTL', default: '86400', description: 'Seconds an uploaded file_key stays usable before the sweeper deletes it.' },
  { name: 'SIGNET_MAX_UPLOAD_BYTES', default: '2147483648', description: 'Largest accepted upload in bytes (2 GiB).' },
  { name: 'SIGNET_RATE_LIMIT', default: '20/s,100', description: 'Per API key: `R/s,B` allows B requests per window of B/R seconds (default 100 per 5 s); more answer 429 rate_limited.' },
  { name: 'SIGNET_WORKER_CONCURRENCY', default: '2', description: 'Signing tasks run at once in this process (0 = API only, no worker).' },
  { name: 'SIGNET_TLS_CERT', default: '', description: 'PEM certificate chain; with SIGNET_TLS_KEY, Signet serves HTTPS itself.' },
  { name: 'SIGNET_TLS_KEY', default: '', description: 'PEM private key for SIGNET_TLS_CERT.' },
  { name: 'SIGNET_APPLE_CA_DIR', default: '', description: "Folder of extra CA certificates (DER or PEM) completing iOS signing chains, besides Apple's root and WWDR CAs shipped with Signet (a .p12 holding only the leaf needs nothing more for a current Apple certificate)." },
  { name: 'SIGNET_ASC_BASE_URL', default: 'https://api.appstoreconnect.apple.com', description: 'App Store Connect API base URL (point it at a test server in tests).' },
  { name: 'SIGNET_PROFILE_SIGNING_CERT', default: '', description: 'PEM certificate chain signing UDID-capture .mobileconfig files (default: the TLS certificate).' },
  { name: 'SIGNET_PROFILE_SIGNING_KEY', default: '', description: 'PEM private key for SIGNET_PROFILE_SIGNING_CERT.' },
  { name: 'SIGNET_LOG_LEVEL', default: 'info', description: '`debug`, `info`, `warn`, `error` or `silent`.' },
  { name: 'SIGNET_SESSION_IDLE_TIMEOUT', default: '86400', description: 'Seconds without a request after which a console session ends.' },
  { name: 'SIGNET_SESSION_MAX_AGE', default: '1209600', description: 'Seconds after sign-in at which a console session ends however active (14 days).' },
  { name: 'SIGNET_SIGN_IN_LIMIT', default: '10/60s,5/900s', description: 'Console sign-in attempts allowed per client address per window, then per email per window.' },
  { name: 'SIGNET_TRUST_PROXY', default: '', description: 'Behind a reverse proxy: `true`, the number of proxy hops, or the proxies\' addresses/CIDRs (comma-separated), so client addresses (rate limits, logs) come from X-Forwarded-For. Unset: the socket address.' },
  { name: 'SIGNET_PUBLIC_RATE_LIMIT', default: '120/min', description: 'Requests per client address and public route (install pages, downloads, QR codes, manifests, UDID), e.g. `120/min`, `10/s`.' },
  { name: 'SIGNET_PASSWORD_ATTEMPTS', default: '10/min', description: 'Wrong install-link passwords per link and client address before a lockout (doubling with each further lockout, up to an hour); ten times as many per link from all addresses.' },
  { name: 'SIGNET_HEADERS_TIMEOUT', default: '20', description: 'Seconds a client may take to send the request headers.' },
  { name: 'SIGNET_BODY_IDLE_TIMEOUT', default: '30', description: 'Seconds a request body may stall before the request is answered 408 and the connection closed.' },
  { name: 'SIGNET_MIN_BODY_RATE', default: '4096', description: 'Bytes per second a request body must average after its first 10 seconds (slower clients get 408); 0 turns the check off.' },
  { name: 'SIGNET_MAX_CONNECTIONS_PER_ADDRESS', default: '64', description: 'Open connections per client address (0 = no cap; off when SIGNET_TRUST_PROXY is set).' },
  { name: 'SIGNET_OUTBOUND_ALLOW', default: '', description: 'Private destinations webhooks may call anyway: comma-separated CIDRs, addresses and host names (`*.corp.example`). Loopback, private, link-local, CGNAT, unique-local, multicast and cloud-metadata addresses are refused otherwise.' },
  { name: 'SIGNET_QUOTA_PENDING_TASKS', default: '1000', description: 'Pending and processing tasks per account (more are refused with 429 task_quota_exceeded); 0 = no quota.' },
  { name: 'SIGNET_QUOTA_STORAGE_BYTES', default: '107374182400', description: 'Bytes per account of uploads and signed artifacts (100 GiB; uploads past it are refused with 413 storage_quota_exceeded); 0 = no quota.' },
  { name: 'SIGNET_METRICS_TOKEN', default: '', description: 'Serves Prometheus metrics at /metrics to requests with `Authorization: Bearer <token>`. Unset: no /metrics.' },
];

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const get = (name: string): string => {
    const setting = SETTINGS.find((s) => s.name === name);
    if (!setting) throw new Error(`unknown setting ${name}`);
    const value = env[name];
    return value === undefined || value === '' ? setting.default : value.trim();
  };
  const optional = (name: string): string | null => get(name) || null;
  const integer = (name: string, min: number, max: number): number => {
    const raw = get(name);
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };
  const oneOf = <T extends string>(name: string, values: readonly T[]): T => {
    const raw = get(name);
    if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };
  const pair = (a: string, b: string): { certFile: string; keyFile: string } | null => {
    const cert = optional(a);
    const key = optional(b);
    if (Boolean(cert) !== Boolean(key)) throw new ConfigError(`${a} and ${b} must be set together`);
    return cert && key ? { certFile: path.resolve(cwd, cert), keyFile: path.resolve(cwd, key) } : null;
  };

  const port = integer('SIGNET_PORT', 0, 65535);
  const publicUrl = optional('SIGNET_PUBLIC_URL');
  if (publicUrl !== null && !/^https?:\/\/[^/]+/.test(publicUrl)) {
    throw new ConfigError(`SIGNET_PUBLIC_URL must be an http:// or https:// URL, got "${publicUrl}"`);
  }
  const databaseUrl = optional('SIGNET_DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('SIGNET_DATABASE_URL must be a postgres:// URL (unset it to use SQLite)');
  }
  const storage = oneOf('SIGNET_STORAGE', ['disk', 's3'] as const);
  const bucket = get('SIGNET_S3_BUCKET');
  if (storage === 's3' && !bucket) throw new ConfigError('SIGNET_STORAGE=s3 needs SIGNET_S3_BUCKET');
  const signIn = /^(\d+)\/(\d+)s,(\d+)\/(\d+)s$/.exec(get('SIGNET_SIGN_IN_LIMIT'));
  if (!signIn || signIn.slice(1).some((n) => Number(n) < 1)) throw new ConfigError(`SIGNET_SIGN_IN_LIMIT must look like "10/60s,5/900s", got "${get('SIGNET_SIGN_IN_LIMIT')}"`);
  const rate = /^(\d+(?:\.\d+)?)\/s,(\d+)$/.exec(get('SIGNET_RATE_LIMIT'));
  if (!rate) throw new ConfigError(`SIGNET_RATE_LIMIT must look like "20/s,100", got "${get('SIGNET_RATE_LIMIT')}"`);

  const perWindow = (name: string): { max: number; windowMs: number } => {
    const raw = get(name);
    const match = /^(\d+)\/(?:(\d*)s|(min)|(h))$/.exec(raw);
    const max = Number(match?.[1]);
    if (!match || max < 1) throw new ConfigError(`${name} must look like "120/min", "10/s", "50/30s" or "500/h", got "${raw}"`);
    const windowMs = match[3] ? 60_000 : match[4] ? 3_600_000 : (match[2] ? Number(match[2]) : 1) * 1000;
    if (windowMs < 1000) throw new ConfigError(`${name}: the window must be at least one second, got "${raw}"`);
    return { max, windowMs };
  };
  const trustProxy = ((): boolean | number | string[] => {
    const raw = get('SIGNET_TRUST_PROXY');
    if (raw === '' || raw === 'false') return false;
    if (raw === 'true') return true;
    if (/^\d+$/.test(raw)) return Number(raw);
    return raw.split(',').map((s) => s.trim()).filter(Boolean);
  })();

  return {
    port,
    host: get('SIGNET_HOST'),
    dataDir: path.resolve(cwd, get('SIGNET_DATA_DIR')),
    publicUrl: publicUrl?.replace(/\/+$/, '') ?? null,
    databaseUrl,
    storage,
    s3: {
      bucket,
      region: get('SIGNET_S3_REGION'),
      endpoint: optional('SIGNET_S3_ENDPOINT'),
      prefix: get('SIGNET_S3_PREFIX'),
      forcePathStyle: oneOf('SIGNET_S3_FORCE_PATH_STYLE', ['true', 'false'] as const) === 'true',
    },
    masterKey: optional('SIGNET_MASTER_KEY'),
    fileKeyTtlSeconds: integer('SIGNET_FILE_KEY_TTL', 60, 365 * 86400),
    keepLiveInputs: oneOf('SIGNET_KEEP_LIVE_INPUTS', ['true', 'false'] as const) === 'true',
    lifecycle: {
      expiringDays: integer('SIGNET_CERT_EXPIRING_DAYS', 0, 365),
      checkIntervalSeconds: integer('SIGNET_CERT_CHECK_INTERVAL', 60, 30 * 86400),
      ocspTimeoutMs: integer('SIGNET_OCSP_TIMEOUT', 1, 120) * 1000,
    },
    maxUploadBytes: integer('SIGNET_MAX_UPLOAD_BYTES', 1, Number.MAX_SAFE_INTEGER),
    rateLimit: { perSecond: Number(rate[1]), burst: Number(rate[2]) },
    workerConcurrency: integer('SIGNET_WORKER_CONCURRENCY', 0, 64),
    tls: pair('SIGNET_TLS_CERT', 'SIGNET_TLS_KEY'),
    appleCaDir: optional('SIGNET_APPLE_CA_DIR') === null ? null : path.resolve(cwd, get('SIGNET_APPLE_CA_DIR')),
    ascBaseUrl: get('SIGNET_ASC_BASE_URL').replace(/\/+$/, ''),
    profileSigning: pair('SIGNET_PROFILE_SIGNING_CERT', 'SIGNET_PROFILE_SIGNING_KEY'),
    logLevel: oneOf('SIGNET_LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const),
    session: { idleTimeoutSeconds: integer('SIGNET_SESSION_IDLE_TIMEOUT', 60, 365 * 86400), maxAgeSeconds: integer('SIGNET_SESSION_MAX_AGE', 60, 365 * 86400) },
    signInLimit: {
      perAddress: { max: Number(signIn[1]), windowSeconds: Number(signIn[2]) },
      perEmail: { max: Number(signIn[3]), windowSeconds: Number(signIn[4]) },
    },
    trustProxy,
    publicRateLimit: perWindow('SIGNET_PUBLIC_RATE_LIMIT'),
    passwordAttempts: perWindow('SIGNET_PASSWORD_ATTEMPTS'),
    limits: {
      headersTimeoutMs: integer('SIGNET_HEADERS_TIMEOUT', 1, 3600) * 1000,
      bodyIdleMs: integer('SIGNET_BODY_IDLE_TIMEOUT', 1, 3600) * 1000,
      minBodyBytesPerSecond: integer('SIGNET_MIN_BODY_RATE', 0, 1024 * 1024 * 1024),
      maxConnectionsPerAddress: trustProxy === false ? integer('SIGNET_MAX_CONNECTIONS_PER_ADDRESS', 0, 1_000_000) : 0,
    },
    outboundAllow: get('SIGNET_OUTBOUND_ALLOW'),
    quotas: { pendingTasks: integer('SIGNET_QUOTA_PENDING_TASKS', 0, 100_000_000), storageBytes: integer('SIGNET_QUOTA_STORAGE_BYTES', 0, Number.MAX_SAFE_INTEGER) },
    metricsToken: optional('SIGNET_METRICS_TOKEN'),
  };
}

/** The base URL links are built from: SIGNET_PUBLIC_URL, else the local listener. */
export function publicBaseUrl(config: Config): string {
  return config.publicUrl ?? `${config.tls ? 'https' : 'http'}://localhost:${config.port}`;
}
