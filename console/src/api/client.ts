// The console's API client: openapi-fetch typed by schema.d.ts, which is generated from the
// server's OpenAPI document (scripts/console-api.ts), so the console calls exactly the API that
// pipelines call. The session cookie travels by itself; this adds the session's CSRF token to
// every request that changes something, and turns error bodies into ApiError.
import createClient from 'openapi-fetch';
import type { paths } from './schema';

export type { paths };

/** The `data` of a route's 200 answer. */
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': { data: infer D } } } };
}
  ? D
  : never;

export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let csrfToken: string | null = null;
let onUnauthorized: ((code: string) => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the server says the session is gone (401), e.g. to go to the sign-in page. */
export function whenUnauthorized(handler: (code: string) => void): void {
  onUnauthorized = handler;
}

export const api = createClient<paths>({ baseUrl: '/v1', credentials: 'same-origin' });
api.use({
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
});

interface ErrorBody {
  code?: number;
  error?: string;
  message?: string;
}

function fail(response: Response, body: unknown): never {
  const error = (body ?? {}) as ErrorBody;
  const code = error.error ?? 'internal_error';
  if (response.status === 401 && onUnauthorized) onUnauthorized(code);
  throw new ApiError(response.status, code, error.message ?? response.statusText);
}

/** Awaits an openapi-fetch call and returns the envelope's `data`, or throws ApiError. */
export async function unwrap<D>(pending: Promise<{ data?: { data: D }; error?: unknown; response: Response }>): Promise<D> {
  let result: Awaited<typeof pending>;
  try {
    result = await pending;
  } catch (cause) {
    throw new ApiError(0, 'network', cause instanceof Error ? cause.message : String(cause));
  }
  if (!result.response.ok || result.data === undefined) fail(result.response, result.error);
  return result.data.data;
}

/**
 * A multipart POST with upload progress (fetch cannot report it): the package upload and the
 * certificate and developer-account forms.
 */
export function postForm<D>(path: string, form: FormData, onProgress?: (fraction: number) => void): Promise<D> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/v1${path}`);
    if (csrfToken) xhr.setRequestHeader('x-csrf-token', csrfToken);
    xhr.responseType = 'json';
    if (onProgress) xhr.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The server could not be reached.'));
    xhr.onload = () => {
      const body = xhr.response as ({ data: D } & ErrorBody) | null;
      if (xhr.status === 200 && body) return resolve(body.data);
      const response = new Response(null, { status: xhr.status, statusText: xhr.statusText });
      try {
        fail(response, body);
      } catch (error) {
        reject(error);
      }
    };
    xhr.send(form);
  });
}
