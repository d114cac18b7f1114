// The OpenAPI document: @fastify/swagger collects every route's TypeBox schema; this file adds
// what route schemas cannot say: the server URLs (the API's base URL ends in /v1), bearer
// security on every non-public route, and the whole error catalogue as a component.
import type { FastifyInstance } from 'fastify';
import { catalogueRows } from './error-status.ts';
import type { RouteAuth } from './plugins/auth.ts';

export const API_VERSION = '1.0.2';
export const PUBLIC_PATHS = new Set(['/healthz', '/readyz', '/docs', '/v1/openapi.json']);
/** Where @fastify/swagger-ui serves the API reference (its page, assets and the document it shows). */
export const DOCS_PREFIX = '/docs';

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
    properties: {
      file: { type: 'string', format: 'binary', description: 'The .ipa or .apk (at most 2 GiB).' },
      notes: { type: 'string', description: 'Release notes, plain text or Markdown, at most 10 KB (`release_notes` and `changelog` are accepted as other names).' },
    },
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

const STATUS_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted', '204': 'No Content', '206': 'Partial Content' };

/**
 * A union of single-value enums of one type (TypeBox's Union of Literals) as one enum: viewers
 * show `"enterprise" | "super"` for it instead of "string | string".
 */
function collapseLiteralUnions(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) collapseLiteralUnions(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  const members = schema.anyOf;
  if (Array.isArray(members) && members.length > 1) {
    const literals = members.map((m) => m as Record<string, unknown>);
    const type = literals[0]?.type;
    const single = (m: Record<string, unknown>) => Object.keys(m).every((k) => k === 'type' || k === 'enum' || k === 'const') && (Array.isArray(m.enum) ? m.enum.length === 1 : 'const' in m);
    if (typeof type === 'string' && literals.every((m) => m.type === type && single(m))) {
      delete schema.anyOf;
      schema.type = type;
      schema.enum = literals.map((m) => (Array.isArray(m.enum) ? m.enum[0] : m.const));
    }
  }
  for (const value of Object.values(schema)) collapseLiteralUnions(value);
}

/** fastify-swagger names every response without a description "Default Response": say what it is. */
function describeResponses(operation: Operation): void {
  const responses = operation.responses as Record<string, { description?: string }> | undefined;
  for (const [status, response] of Object.entries(responses ?? {})) {
    if (response.description === undefined || response.description === 'Default Response') {
      response.description = STATUS_TEXT[status] ?? `HTTP ${status}`;
    }
  }
}

export function buildOpenApi(app: FastifyInstance, baseUrl: string, auth: ReadonlyMap<string, RouteAuth> = new Map()): Document {
  return finishOpenApi((app as unknown as { swagger(): Document }).swagger(), baseUrl, auth);
}

/** The document @fastify/swagger collected, completed with servers, security, bodies and the catalogue. */
export function finishOpenApi(raw: Document, baseUrl: string, auth: ReadonlyMap<string, RouteAuth> = new Map()): Document {
  const doc: Document = structuredClone(raw);
  collapseLiteralUnions(doc);
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
      describeResponses(out[method]!);
    }
    if (!isV1) Object.assign(out, { servers: [{ url: baseUrl, description: 'Service root (outside the versioned API)' }] });
    paths[relative] = out;
  }
  doc.paths = paths;
  doc.servers = [{ url: `${baseUrl}/v1`, description: 'API base URL' }];
  doc['x-error-catalogue'] = catalogueRows();
  return doc;
}
