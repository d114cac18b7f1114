// Who is signed in: the session from GET /v1/session, kept in one reactive object. Pages read
// `session.value` for the user, the current team, its role and scopes.
import { ref } from 'vue';
import { ApiError, api, setCsrfToken, unwrap, type Ok } from './api/client.ts';

export type Session = Ok<'/session', 'get'>;
export type Scope = Session['scopes'][number];

export const session = ref<Session | null>(null);
let loaded: Promise<Session | null> | null = null;

export function useSession(next: Session | null): void {
  session.value = next;
  setCsrfToken(next?.csrf_token ?? null);
}

/** Loads the session once (again after `forget`); null when nobody is signed in. */
export function loadSession(): Promise<Session | null> {
  loaded ??= unwrap(api.GET('/session')).then(
    (value) => (useSession(value), value),
    (error: unknown) => {
      if (error instanceof ApiError && error.status === 401) {
        useSession(null);
        return null;
      }
      loaded = null;
      throw error;
    },
  );
  return loaded;
}

export function forget(): void {
  useSession(null);
  loaded = Promise.resolve(null);
}

export function can(scope: Scope): boolean {
  return session.value?.scopes.includes(scope) ?? false;
}

/** Reads the session again (after the account changed under it). */
export function reloadSession(): Promise<Session | null> {
  loaded = null;
  return loadSession();
}
