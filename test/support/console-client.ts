// A console user for service tests: signs in (or completes setup / an invitation) like the
// console does, then calls the API with the session cookie and the CSRF token.
import type { ApiResponse } from './api-client.ts';

export class ConsoleClient {
  readonly url: string;
  cookie: string | null = null;
  csrf: string | null = null;
  session: any = null;

  constructor(url: string) {
    this.url = url;
  }

  /** Any request; `csrf: false` leaves the token out (to test that it is required). */
  async request<T = any>(method: string, path: string, init: { json?: unknown; body?: BodyInit; csrf?: boolean; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookie) headers.cookie = this.cookie;
    if (this.csrf && init.csrf !== false) headers['x-csrf-token'] = this.csrf;
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${this.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const set = response.headers.getSetCookie().find((c) => c.startsWith('signet_session='));
    if (set) this.cookie = set.split(';')[0]!.endsWith('=') ? null : set.split(';')[0]!;
    const text = await response.text();
    const parsed = (response.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
    if (response.ok && parsed?.data?.csrf_token) {
      this.csrf = parsed.data.csrf_token;
      this.session = parsed.data;
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }

  post<T = any>(path: string, json?: unknown, options: { csrf?: boolean } = {}) {
    return this.request<T>('POST', path, { ...(json === undefined ? {} : { json }), ...options });
  }

  signIn(email: string, password: string) {
    return this.post('/v1/auth/sign-in', { email, password });
  }

  /** Completes first-run setup with the link the server printed. */
  setup(setupUrl: string, email: string, password: string, accountName?: string) {
    const token = new URL(setupUrl).searchParams.get('token');
    return this.post('/v1/setup', { token, email, password, ...(accountName ? { account_name: accountName } : {}) });
  }

  accept(invitationUrl: string, password: string) {
    return this.post('/v1/invitations/accept', { token: new URL(invitationUrl).searchParams.get('token'), password });
  }

  /** An API key made through the console's own route. */
  async createKey(scopes: string[], label = 'test'): Promise<string> {
    const made = await this.post('/v1/api-keys', { label, scopes });
    if (made.status !== 200) throw new Error(`creating a key failed: ${JSON.stringify(made.body)}`);
    return made.body.data.key;
  }
}
