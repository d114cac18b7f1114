// One error path for the whole service: every failure, whether thrown by a service (AppError), an
// engine (SigningError), fastify itself (validation, content type, body limits, bad URLs), the
// multipart parser, or Node's HTTP parser (clientError), leaves with a catalogue code — as
// `{code, error, message}` with the catalogue status on the API, or as an HTML page carrying the
// code in a `Signet-Error` header on the public pages. Unknown errors are logged with their stack
// and answered with a generic message, never their text.
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { messages, type Language } from '../../distribution/i18n/index.ts';
import { renderMessagePage, type MessagePageModel } from '../../distribution/pages/message-page.ts';
import { AppError, ERROR_CATALOGUE, errorCodeOf, type ErrorCode } from '../../errors.ts';
import { ERROR_STATUS } from '../error-status.ts';
import { localizedRefusal, pageLanguage, refusalText, sendPage } from '../public-pages.ts';

// node:http through getBuiltinModule, not an ESM import: an ESM import of node:http reads every export,
// including the lazy WebSocket/CloseEvent/MessageEvent getters, which load undici (~0.75 MB of source,
// ~3-4 MB of heap) at server start though nothing here uses it.
const http = process.getBuiltinModule('node:http');

export function sendError(reply: FastifyReply, code: ErrorCode, message?: string): FastifyReply {
  const status = ERROR_STATUS[code];
  // The code also travels as a header, so answers without a body (HEAD) still name it.
  return reply.code(status).header('signet-error', code).type('application/json; charset=utf-8').send({ code: status, error: code, message: message ?? ERROR_CATALOGUE[code] });
}

interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** "file_key is required" / "certficate_id is not a known field" / "max_downloads must be integer". */
function describeValidation(issue: ValidationIssue | undefined, context: string | undefined): string {
  if (!issue) return 'The request is invalid.';
  const where = (issue.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
    const field = where ? `${where}.${issue.params.missingProperty}` : issue.params.missingProperty;
    return `${field} is required`;
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
    const field = where ? `${where}.${issue.params.additionalProperty}` : issue.params.additionalProperty;
    return `${field} is not a known ${context === 'querystring' ? 'query parameter' : 'field'}`;
  }
  const subject = where || (context === 'body' ? 'the body' : context ?? 'the request');
  return `${subject} ${issue.message ?? 'is invalid'}`;
}

/** Catalogue codes for the 4xx statuses fastify and its plugins answer with on their own. */
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'body_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'address_rate_limited',
  431: 'headers_too_large',
};

/** Maps fastify's own errors (which carry a statusCode and FST_* code) into the catalogue. */
function classify(error: FastifyError): { code: ErrorCode; message?: string } {
  if (error.validation) return { code: 'invalid_request', message: describeValidation(error.validation[0] as ValidationIssue, error.validationContext) };
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return { code: 'unsupported_media_type', message: 'This route does not accept the request content type.' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'invalid_request', message: 'The JSON body is empty.' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'invalid_request', message: 'The body is not valid JSON.' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'body_too_large' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'invalid_request', message: 'The body does not match its Content-Length.' };
    case 'FST_ERR_BAD_URL':
      return { code: 'invalid_request', message: 'The URL is not valid (malformed percent-encoding).' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { code: 'uri_too_long', message: 'A path segment of the URL is longer than any identifier.' };
    case 'FST_REQ_FILE_TOO_LARGE':
      return { code: 'file_too_large' };
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return { code: 'invalid_request', message: `Malformed multipart form: ${error.message}` };
  }
  if (error instanceof SyntaxError) return { code: 'invalid_request', message: 'The body is not valid JSON.' };
  const status = error.statusCode ?? 500;
  const code = STATUS_CODES[status] ?? (status >= 400 && status < 500 ? 'invalid_request' : 'internal_error');
  return code === 'invalid_request' && status === 400 && error.message ? { code, message: error.message } : { code };
}

/** The catalogue code and message of any error (unknown ones: internal_error, no message). */
export function catalogueOf(error: unknown): { code: ErrorCode; message: string | undefined } {
  const known = errorCodeOf(error);
  if (known) return { code: known, message: (error as Error).message };
  const { code, message } = classify(error as FastifyError);
  return { code, message: code === 'internal_error' ? undefined : message };
}

/** Headers that an error answer may carry (Retry-After, WWW-Authenticate, Allow…). */
function decorate(reply: FastifyReply, error: unknown, code: ErrorCode): void {
  if (error instanceof AppError && typeof error.details?.retryAfterSeconds === 'number') {
    // A zero refill rate never refills: say a day rather than Infinity.
    reply.header('retry-after', String(Math.min(86_400, Math.max(1, Math.ceil(error.details.retryAfterSeconds)))));
  }
  if (code === 'unauthorized') {
    reply.header('www-authenticate', 'Bearer realm="signet"');
    // Nothing more is served without a key: do not keep the socket for whoever is probing.
    reply.header('connection', 'close');
  }
  // A request refused before its body was read (too large, unauthenticated, throttled) must not
  // leave the rest of the body on the socket: the connection closes after the answer.
  if (!reply.request.raw.complete) {
    reply.header('connection', 'close');
    lingerOnClose(reply.request.raw.socket);
  }
}

const LINGERING = Symbol('signet.lingering');
const LINGER_MS = 2000;

/**
 * A lingering close (as nginx's lingering_close): a client still sending a body it was refused
 * must get to read the answer. Node closes such a socket as soon as the answer is written, and
 * the client's next bytes then draw a TCP reset, which discards the unread answer on its side
 * (the client sees EPIPE/ECONNRESET instead of 413 or 503). So the socket half-closes after the
 * answer, drops whatever still arrives, and is destroyed LINGER_MS later.
 */
function lingerOnClose(socket: Socket | null): void {
  if (!socket || (socket as Socket & { [LINGERING]?: boolean })[LINGERING]) return;
  (socket as Socket & { [LINGERING]?: boolean })[LINGERING] = true;
  socket.destroySoon = function lingeringDestroySoon(this: Socket) {
    this.end();
    this.resume();
    const timer = setTimeout(() => this.destroy(), LINGER_MS).unref();
    this.once('close', () => clearTimeout(timer));
  };
}

export interface ErrorPageOptions {
  /** The public URL is https (the language cookie is then Secure); default: the request's protocol. */
  secure?: boolean;
  /** The page's words instead of the code's usual ones, in the visitor's language. */
  describe?: (language: Language, code: ErrorCode) => { title: string; message: string } | null;
  /** The app the refused link was for, when it may be named (not password protected). */
  app?: MessagePageModel['app'];
}

/** The public pages' error answer: a page for people in their language, the code in Signet-Error for scripts. */
export function sendErrorPage(request: FastifyRequest, reply: FastifyReply, code: ErrorCode, options: ErrorPageOptions = {}, detail?: string): FastifyReply {
  // Routes that render pages have their security headers already; a page for a path no route
  // matches (a mistyped link) gets the same ones here.
  const helmet = (reply as FastifyReply & { helmet?: ((options?: object) => void) | null }).helmet;
  if (typeof helmet === 'function' && reply.getHeader('content-security-policy') === undefined) helmet();
  const language = pageLanguage(request, reply, options.secure ?? request.protocol === 'https');
  const described = options.describe?.(language, code) ?? null;
  // Codes the pages have no words for (a malformed form, say) show the error's own message.
  const [title, message] = described
    ? [described.title, described.message]
    : (localizedRefusal(language, code) ?? (detail !== undefined && ERROR_STATUS[code] < 500 ? [messages(language).unavailableTitle, detail] : refusalText(language, code)));
  reply.header('signet-error', code);
  return sendPage(reply, ERROR_STATUS[code], renderMessagePage({ language, requestUrl: request.url, title, message, app: options.app ?? null }));
}

/** Any error as a public page (install pages, UDID capture): logged like the API's errors. */
export function sendErrorAsPage(request: FastifyRequest, reply: FastifyReply, error: unknown, options: ErrorPageOptions = {}): FastifyReply {
  const { code, message } = catalogueOf(error);
  log(request, error, code);
  decorate(reply, error, code);
  return sendErrorPage(request, reply, code, options, message);
}

function log(request: FastifyRequest, error: unknown, code: ErrorCode): void {
  if (ERROR_STATUS[code] >= 500) request.log.error({ err: error, error_code: code }, 'request failed');
  else request.log.info({ error_code: code }, 'request rejected');
}

/** Paths answered with HTML pages rather than JSON. */
export const isPagePath = (url: string): boolean => /^\/[da](\/|$)/.test(url);

export function installErrorHandling(app: FastifyInstance, routeAllows: (method: string, path: string) => string[]): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { code, message } = catalogueOf(error);
    log(request, error, code);
    decorate(reply, error, code);
    return sendError(reply, code, message);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = routeAllows(request.method, path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, 'method_not_allowed', `${request.method} is not allowed here; use ${allowed.join(' or ')}.`);
    }
    if (isPagePath(path)) return sendErrorPage(request, reply, 'not_found');
    return sendError(reply, 'not_found', `No route ${request.method} ${path}.`);
  });
}

/** fastify's `frameworkErrors`: errors raised before routing (bad percent-encoding, over-long ids). */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { code, message } = catalogueOf(error);
  log(request, error, code);
  if (isPagePath(request.raw.url ?? '')) sendErrorPage(request, reply, code, {}, message);
  else sendError(reply, code, message);
}

/**
 * fastify's `clientErrorHandler`: Node's HTTP parser refused the request (malformed, headers too
 * large, headers or body too slow). There is no request to route, so the answer is written to
 * the socket directly — still a catalogue envelope — and the connection is closed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'invalid_request';
  const status = ERROR_STATUS[code];
  const body = JSON.stringify({ code: status, error: code, message: ERROR_CATALOGUE[code] });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Signet-Error: ${code}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
