// What every public page route (install pages, UDID registration) shares: the visitor's language
// (src/distribution/i18n: ?lang=, then the cookie that remembers it, then WeChat's Language/
// token, then Accept-Language), the HTML response headers, and the words for each refusal.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { chooseLanguage, LANGUAGE_COOKIE, languageOfTag, messages, type Language } from '../distribution/i18n/index.ts';
import type { ErrorCode } from '../errors.ts';

/** The page language for this request; a valid `?lang=` is remembered in a cookie for a year. */
export function pageLanguage(request: FastifyRequest, reply: FastifyReply, secure: boolean): Language {
  const query = (request.query as { lang?: unknown } | undefined)?.lang;
  const chosen = typeof query === 'string' ? languageOfTag(query) : null;
  if (chosen !== null) {
    reply.header('set-cookie', `${LANGUAGE_COOKIE}=${chosen}; Path=/; Max-Age=31536000; SameSite=Lax${secure ? '; Secure' : ''}`);
  }
  reply.header('vary', 'Accept-Language, Cookie, User-Agent');
  return chooseLanguage({
    query: chosen ?? undefined,
    cookie: cookie(request, LANGUAGE_COOKIE),
    userAgent: request.headers['user-agent'],
    acceptLanguage: request.headers['accept-language'],
  });
}

export function cookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(body);
}

/** Title and message of the page that answers a refusal, in the visitor's language. */
export function refusalText(language: Language, code: ErrorCode | null): [string, string] {
  const t = messages(language);
  return localizedRefusal(language, code) ?? [t.unavailableTitle, t.failed];
}

/** The words of a refusal the pages know how to explain; null for any other code. */
export function localizedRefusal(language: Language, code: ErrorCode | null): [string, string] | null {
  const t = messages(language);
  switch (code) {
    case 'distribution_not_found': return [t.notFoundTitle, t.notFound];
    case 'link_expired': return [t.expiredTitle, t.expired];
    case 'link_disabled': return [t.disabledTitle, t.disabled];
    case 'download_quota_exceeded': return [t.exhaustedTitle, t.exhausted];
    case 'password_required': return [t.passwordRequiredTitle, t.passwordRequired];
    case 'rate_limited':
    case 'address_rate_limited': return [t.rateLimitedTitle, t.rateLimited];
    case 'password_attempts_exceeded': return [t.passwordAttemptsTitle, t.passwordAttempts];
    case 'not_found': return [t.pageNotFoundTitle, t.pageNotFound];
    case 'super_signing_unavailable': return [t.failNoSuperTitle, t.failNoSuper];
    case null:
    case 'internal_error': return [t.failedTitle, t.failed];
    default: return null;
  }
}
