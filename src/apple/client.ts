// HTTP transport to the App Store Connect API: bearer tokens, JSON:API bodies, pagination,
// rate limits and retries (distribution-protocols.md §3.2.2, §3.2.4).
// - Requests with one key are serialised (one in flight): Apple answers bursts from one key with
//   429 even while `user-hour-rem` is high (Apple forums 731014).
// - 429 and 5xx are retried with exponential backoff (Retry-After honoured); network errors too.
// - 401 is retried once with a fresh token (a clock step can invalidate the cached one).
// - Every other non-2xx is an AscApiError; resource code (app-store-connect.ts) decides which are
//   business outcomes (a duplicate device) and which are failures (toAppError).
import { AppError } from '../errors.ts';
import { AscApiError, parseErrorBody } from './errors.ts';
import { AscTokenSource, type AscKey } from './jwt.ts';

export interface AscClientOptions {
  /** e.g. https://api.appstoreconnect.apple.com (SIGNET_ASC_BASE_URL), no trailing slash. */
  baseUrl: string;
  key: AscKey;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Retries of a 429/5xx/network failure before giving up (default 4). */
  maxRetries?: number;
  /** First backoff delay; doubled per retry (default 1 s). */
  baseDelayMs?: number;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
}

export interface RateLimit {
  limit: number;
  remaining: number;
}

export type Query = Record<string, string | number | readonly string[] | undefined>;

export interface JsonApiDocument {
  data: unknown;
  links?: { next?: string };
  meta?: { paging?: { total?: number; limit?: number } };
}

const MAX_RETRY_DELAY_MS = 60_000;

export class AscClient {
  readonly baseUrl: string;
  readonly #tokens: AscTokenSource;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #maxRetries: number;
  readonly #baseDelayMs: number;
  readonly #timeoutMs: number;
  #tail: Promise<unknown> = Promise.resolve();
  /** The last X-Rate-Limit header seen ("user-hour-lim:3600;user-hour-rem:3586;"). */
  rateLimit: RateLimit | null = null;

  constructor(options: AscClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#tokens = new AscTokenSource(options.key, options.now);
    this.#fetch = options.fetch ?? fetch;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#maxRetries = options.maxRetries ?? 4;
    this.#baseDelayMs = options.baseDelayMs ?? 1000;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  get(path: string, query: Query = {}): Promise<JsonApiDocument> {
    return this.request('GET', path, query) as Promise<JsonApiDocument>;
  }

  post(path: string, body: unknown): Promise<JsonApiDocument> {
    return this.request('POST', path, {}, body) as Promise<JsonApiDocument>;
  }

  patch(path: string, body: unknown): Promise<JsonApiDocument> {
    return this.request('PATCH', path, {}, body) as Promise<JsonApiDocument>;
  }

  async delete(path: string): Promise<void> {
    await this.request('DELETE', path, {});
  }

  /** Every resource of a collection, following `links.next` (limit 200, the maximum). */
  async getAll(path: string, query: Query = {}): Promise<unknown[]> {
    const items: unknown[] = [];
    let document = await this.get(path, { limit: 200, ...query });
    for (let pages = 1; ; pages++) {
      if (Array.isArray(document.data)) items.push(...document.data);
      const next = document.links?.next;
      if (!next) return items;
      if (pages >= 1000) throw new AppError('apple_request_failed', `App Store Connect ${path} kept paginating past 1000 pages.`);
      document = (await this.request('GET', this.#sameOrigin(next), {})) as JsonApiDocument;
    }
  }

  /** `path` is relative to the base URL, or an absolute `links.next` URL on the same origin. */
  request(method: string, path: string, query: Query, body?: unknown): Promise<unknown> {
    const run = this.#tail.then(() => this.#send(method, path, query, body));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #send(method: string, path: string, query: Query, body: unknown): Promise<unknown> {
    const url = new URL(path.startsWith('http') ? path : `${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      // OpenAPI style: form, explode: false — arrays are comma-separated in one parameter.
      url.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    let refreshedToken = false;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${await this.#tokens.token()}`, accept: 'application/json' };
        if (body !== undefined) headers['content-type'] = 'application/json';
        response = await this.#fetch(url, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (cause) {
        if (attempt < this.#maxRetries) {
          await this.#sleep(this.#delay(attempt, null));
          continue;
        }
        throw new AppError('apple_unavailable', `App Store Connect ${method} ${url.pathname} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
      }
      this.#readRateLimit(response.headers.get('x-rate-limit'));
      const text = await response.text();
      const json = text ? safeJson(text) : null;
      if (response.ok) return json;
      if (response.status === 401 && !refreshedToken) {
        refreshedToken = true;
        this.#tokens.invalidate();
        continue;
      }
      if ((response.status === 429 || response.status >= 500) && attempt < this.#maxRetries) {
        await this.#sleep(this.#delay(attempt, response.headers.get('retry-after')));
        continue;
      }
      throw new AscApiError(response.status, parseErrorBody(json), method, url.pathname);
    }
  }

  #delay(attempt: number, retryAfter: string | null): number {
    const seconds = retryAfter === null ? NaN : Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_DELAY_MS);
    // Full jitter keeps several workers retrying one key from marching in step.
    return Math.min(this.#baseDelayMs * 2 ** attempt * (0.5 + Math.random() / 2), MAX_RETRY_DELAY_MS);
  }

  #readRateLimit(header: string | null): void {
    if (header === null) return;
    const limit = /user-hour-lim:(\d+)/.exec(header)?.[1];
    const remaining = /user-hour-rem:(\d+)/.exec(header)?.[1];
    if (limit !== undefined && remaining !== undefined) this.rateLimit = { limit: Number(limit), remaining: Number(remaining) };
  }

  #sameOrigin(next: string): string {
    const url = new URL(next);
    if (url.origin !== new URL(this.baseUrl).origin) {
      throw new AppError('apple_request_failed', `App Store Connect pagination pointed to another origin (${url.origin}).`);
    }
    return url.href;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
