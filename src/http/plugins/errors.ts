// One error path for the whole API: every failure, whether thrown by a service (AppError), an
// engine (SigningError), fastify itself (validation, content type, body limits) or an unknown
// bug, leaves as `{code, error, message}` with the catalogue status. Unknown errors are logged
// with their stack and answered with a generic message, never their text.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CATALOGUE, errorCodeOf, type ErrorCode } from '../../errors.ts';
import { ERROR_STATUS } from '../error-status.ts';

export function sendError(reply: FastifyReply, code: ErrorCode, message?: string): FastifyReply {
  const status = ERROR_STATUS[code];
  return reply.code(status).type('application/json; charset=utf-8').send({ code: status, error: code, message: message ?? ERROR_CATALOGUE[code] });
}

interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** "file_key is required" / "cert_type must be equal to one of the allowed values". */
function describeValidation(issue: ValidationIssue | undefined, context: string | undefined): string {
  if (!issue) return 'The request is invalid.';
  const where = (issue.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
    const field = where ? `${where}.${issue.params.missingProperty}` : issue.params.missingProperty;
    return `${field} is required`;
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
    return `${issue.params.additionalProperty} is not a known field`;
  }
  const subject = where || (context === 'body' ? 'the body' : context ?? 'the request');
  return `${subject} ${issue.message ?? 'is invalid'}`;
}

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
      return { code: 'invalid_request', message: 'The request body is too large.' };
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
  if (status === 400) return { code: 'invalid_request', message: error.message };
  if (status === 404) return { code: 'not_found' };
  if (status === 413) return { code: 'invalid_request', message: 'The request body is too large.' };
  if (status === 415) return { code: 'unsupported_media_type' };
  return { code: 'internal_error' };
}

export function installErrorHandling(app: FastifyInstance, routeAllows: (method: string, path: string) => string[]): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = errorCodeOf(error);
    let code: ErrorCode;
    let message: string | undefined;
    if (known) {
      code = known;
      message = error.message;
    } else {
      ({ code, message } = classify(error));
    }
    const status = ERROR_STATUS[code];
    if (status >= 500) request.log.error({ err: error, error_code: code }, 'request failed');
    else request.log.info({ error_code: code }, 'request rejected');
    if (code === 'internal_error') message = undefined;
    if (error instanceof AppError && typeof error.details?.retryAfterSeconds === 'number') {
      // A zero refill rate (SIGNET_RATE_LIMIT=0/s,N) never refills: say a day rather than Infinity.
      reply.header('retry-after', String(Math.min(86_400, Math.max(1, Math.ceil(error.details.retryAfterSeconds)))));
    }
    if (code === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="signet"');
    return sendError(reply, code, message);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = routeAllows(request.method, path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, 'method_not_allowed', `${request.method} is not allowed here; use ${allowed.join(' or ')}.`);
    }
    return sendError(reply, 'not_found', `No route ${request.method} ${path}.`);
  });
}
