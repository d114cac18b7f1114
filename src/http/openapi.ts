// The OpenAPI document: @fastify/swagger collects every route's TypeBox schema; this file adds
// what route schemas cannot say: the server URLs (the API's base URL ends in /v1), bearer
// security on every non-public route, and the whole error catalogue as a component.
import type { FastifyInstance } from 'fastify';
import { catalogueRows } from './error-status.ts';
import type { RouteAuth } from './plugins/auth.ts';

export const API_VERSION = '1.0.2';
export const PUBLIC_PATHS = new Set(['/healthz', '/readyz', '/docs', '/v1/openapi.json']);

export const SWAGGER_OPTIONS = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Signet API',
      version: API_VERSION,
      description:
        'Upload .ipa/.apk packages, sign them with your certificates, and download the signed artifacts. ' +
        'Authenticate with `Authorization: Bearer sk_…` (an API key, limited to its scopes: `x-scope` on each operation), or with the ' +
        "console's session cookie plus its CSRF token in `X-CSRF-Token` on requests that change something. " +
        'Success bodies are `{code: 200, data}`; every error body is ' +
        '`{code: <HTTP status>, error: <stable code>, message}` with a code from the error catalogue (`x-error-catalogue`).',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `sk_` followed by 43 base62 characters.' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'signet_session',
          description: "The console's HttpOnly session cookie (POST /auth/sign-in). Requests other than GET also need `X-CSRF-Token: <csrf_token of GET /session>`.",
        },
      },
    },
  },
} as const;

/**
 * Multipart bodies are streamed by the handlers (never schema-validated, so a 2 GiB file is
 * not parsed twice); their fields are documented here instead.
 */
const MULTIPART_BODIES: Record<string, Record<string, unknown>> = {
  'POST /v1/apps/upload': {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', format: 'binary', description: 'The .ipa or .apk (at most 2 GiB).' } },
  },
  'POST /v1/certificates': {
    type: 'object',
    required: ['kind', 'file'],
    properties: {
      kind: { type: 'string', enum: ['ios_enterprise', 'ios_adhoc', 'ios_development', 'android'] },
      file: { type: 'string', format: 'binary', description: '.p12/.pfx, .jks, or PEM private key (+ certificate).' },
      password: { type: 'string', description: "The file's password." },
      key_password: { type: 'string', description: "The key's own password when it differs (JKS)." },
      alias: { type: 'string', description: 'Keystore entry to use (Android).' },
      certificate: { type: 'string', format: 'binary', description: 'The certificate, when `file` is a bare private key.' },
      profile: { type: 'string', format: 'binary', description: '.mobileprovision naming the certificate (iOS kinds, required; its type must match the kind).' },
      name: { type: 'string', description: 'A label.' },
    },
  },
};

type Operation = { security?: unknown; servers?: unknown; [key: string]: unknown };
type Document = { paths?: Record<string, Record<string, Operation>>; servers?: unknown; [key: string]: unknown };

export function buildOpenApi(app: FastifyInstance, baseUrl: string, auth: ReadonlyMap<string, RouteAuth> = new Map()): Document {
  const raw = (app as unknown as { swagger(): Document }).swagger();
  const doc: Document = structuredClone(raw);
  const paths: Record<string, Record<string, Operation>> = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const isV1 = path.startsWith('/v1/');
    const relative = isV1 ? path.slice(3) : path;
    const out: Record<string, Operation> = {};
    for (const [method, operation] of Object.entries(item)) {
      // fastify-swagger writes /v1/x/{id} for the route /v1/x/:id.
      const how = auth.get(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`);
      if (PUBLIC_PATHS.has(path) || how?.public) out[method] = { ...operation, security: [] };
      else if (how?.sessionOnly) out[method] = { ...operation, security: [{ session: [] }] };
      else out[method] = { ...operation, security: [{ bearer: [] }, { session: [] }], ...(how?.scope ? { 'x-scope': how.scope } : {}) };
      const multipart = MULTIPART_BODIES[`${method.toUpperCase()} ${path}`];
      if (multipart) out[method]!.requestBody = { required: true, content: { 'multipart/form-data': { schema: multipart } } };
    }
    if (!isV1) Object.assign(out, { servers: [{ url: baseUrl, description: 'Service root (outside the versioned API)' }] });
    paths[relative] = out;
  }
  doc.paths = paths;
  doc.servers = [{ url: `${baseUrl}/v1`, description: 'API base URL' }];
  doc['x-error-catalogue'] = catalogueRows();
  return doc;
}
