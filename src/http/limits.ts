// Rate limits, as named configurations other routes can reuse (the console's sign-in, say):
// - request rates via @fastify/rate-limit: per API key on authenticated routes
//   (SIGNET_RATE_LIMIT) and per client address on the public pages, downloads, QR codes,
//   manifests and UDID routes (SIGNET_PUBLIC_RATE_LIMIT);
// - failed secrets (install-link passwords) via FailureThrottle, which counts failures rather than
//   requests and backs off exponentially: the plugin counts every request, and its exponential
//   backoff reports a Retry-After its in-memory store does not enforce.
// Counters live in this process: behind several API nodes each node counts on its own, which the
// README states.
import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { AppError, type ErrorCode } from '../errors.ts';

export interface RateLimitSettings {
  /** Per API key: a window of `burst` requests refilled at `perSecond`. */
  perKey: { perSecond: number; burst: number };
  /** Per client address and public route. */
  publicRequests: { max: number; windowMs: number };
  /** Failed install-link passwords per link and client address before a lockout. */
  passwordFailures: { max: number; windowMs: number };
}

export type LimitName = 'apiKey' | 'publicPage';

/**
 * Which limit a route gets: its own `config.rateLimit`, else by what it is. The console's pages
 * and the content-hashed static files (console assets, the install pages' stylesheet and script)
 * are cheap, cached files a single sign-in fetches dozens of, behind an office NAT for many
 * people at once: limiting them per address would lock a team out of its console.
 */
function limitFor(route: RouteOptions): LimitName | null {
  const url = route.url;
  if (url === '/healthz' || url === '/readyz' || url === '/metrics') return null; // probes and scrapers
  const config = (route.config ?? {}) as { public?: boolean; page?: boolean };
  if (config.page || url.startsWith('/assets/') || url.startsWith('/pages/')) return null;
  return config.public ? 'publicPage' : 'apiKey';
}

function refusal(code: ErrorCode, ttlMs: number): AppError {
  return new AppError(code, undefined, { details: { retryAfterSeconds: Math.max(1, Math.ceil(ttlMs / 1000)) } });
}

/** The named request-rate configurations, for `config: { rateLimit: namedLimits(settings).x }`. */
export function namedLimits(settings: RateLimitSettings): Record<LimitName, RateLimitOptions> {
  const { perSecond, burst } = settings.perKey;
  return {
    apiKey: {
      max: burst,
      // A zero refill rate never refills: one day stands for "until the operator changes it".
      timeWindow: perSecond > 0 ? Math.max(1, Math.round((burst / perSecond) * 1000)) : 86_400_000,
      // Route-level hooks run after the global auth hook, so the principal is known here.
      keyGenerator: (request: FastifyRequest) => (request.principal ? `key:${request.principal.keyId}` : `ip:${request.ip}`),
      errorResponseBuilder: (_request, context) => refusal('rate_limited', context.ttl),
    },
    publicPage: {
      max: settings.publicRequests.max,
      timeWindow: settings.publicRequests.windowMs,
      errorResponseBuilder: (_request, context) => refusal('address_rate_limited', context.ttl),
    },
  };
}

/** Registers @fastify/rate-limit and gives every route (but probes) its named limit. */
export async function installRateLimits(app: FastifyInstance, settings: RateLimitSettings, onRefused: (limit: LimitName) => void): Promise<void> {
  const limits = namedLimits(settings);
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as { rateLimit?: unknown };
    if (config.rateLimit !== undefined) return;
    const name = limitFor(route);
    if (name === null) return;
    route.config = { ...config, rateLimit: { ...limits[name], onExceeded: () => onRefused(name) } } as typeof route.config;
  });
  await app.register(rateLimit, { global: false, addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false } });
}

interface FailureRecord {
  failures: number;
  windowStartMs: number;
  /** Lockouts in a row: each doubles the next one. */
  strikes: number;
  lockedUntilMs: number;
  lastFailureMs: number;
}

/**
 * Counts failed attempts per key (e.g. "link+address"); `max` failures within `windowMs` lock
 * the key for `windowMs`, then 2×, 4×… for each further lockout, up to `maxLockoutMs`. A quiet
 * period of `maxLockoutMs` forgives past lockouts; a success clears the key.
 */
export class FailureThrottle {
  private readonly records = new Map<string, FailureRecord>();
  private readonly options: { max: number; windowMs: number; maxLockoutMs: number; maxKeys: number; now: () => number };

  constructor(options: { max: number; windowMs: number; maxLockoutMs?: number; maxKeys?: number; now?: () => number }) {
    this.options = { maxLockoutMs: 3_600_000, maxKeys: 100_000, now: () => Date.now(), ...options };
  }

  /** Milliseconds until `key` may try again (0: now). */
  blockedFor(key: string): number {
    const record = this.records.get(key);
    return record ? Math.max(0, record.lockedUntilMs - this.options.now()) : 0;
  }

  /** Records a failure; returns the lockout it started in ms (0: none). */
  fail(key: string): number {
    const { max, windowMs, maxLockoutMs, maxKeys } = this.options;
    const now = this.options.now();
    const record = this.records.get(key) ?? { failures: 0, windowStartMs: now, strikes: 0, lockedUntilMs: 0, lastFailureMs: now };
    if (now - record.lastFailureMs > maxLockoutMs) record.strikes = 0;
    if (now - record.windowStartMs >= windowMs) {
      record.failures = 0;
      record.windowStartMs = now;
    }
    record.failures += 1;
    record.lastFailureMs = now;
    let lockout = 0;
    if (record.failures >= max) {
      lockout = Math.min(maxLockoutMs, windowMs * 2 ** record.strikes);
      record.strikes += 1;
      record.lockedUntilMs = now + lockout;
      record.failures = 0;
      record.windowStartMs = now;
    }
    // Re-inserted last, so the oldest keys are first in line when the map is full.
    this.records.delete(key);
    this.records.set(key, record);
    if (this.records.size > maxKeys) this.records.delete(this.records.keys().next().value as string);
    return lockout;
  }

  succeed(key: string): void {
    this.records.delete(key);
  }
}

/** The password throttles of install links: per link and address, and per link from anywhere. */
export class PasswordThrottle {
  private readonly perAddress: FailureThrottle;
  private readonly perLink: FailureThrottle;

  constructor(settings: RateLimitSettings['passwordFailures'], now?: () => number) {
    const clock = now ? { now } : {};
    this.perAddress = new FailureThrottle({ max: settings.max, windowMs: settings.windowMs, ...clock });
    // Guessing from many addresses at once: ten times the per-address budget for the whole link.
    this.perLink = new FailureThrottle({ max: settings.max * 10, windowMs: settings.windowMs, ...clock });
  }

  /** Throws password_attempts_exceeded (with Retry-After) while the link is locked for this visitor. */
  check(slug: string, address: string): void {
    const wait = Math.max(this.perAddress.blockedFor(`${slug}|${address}`), this.perLink.blockedFor(slug));
    if (wait > 0) throw refusal('password_attempts_exceeded', wait);
  }

  failed(slug: string, address: string): void {
    this.perAddress.fail(`${slug}|${address}`);
    this.perLink.fail(slug);
  }

  succeeded(slug: string, address: string): void {
    this.perAddress.succeed(`${slug}|${address}`);
  }
}
