// Console sessions: sign-in with email and password, the session cookie's token (stored only as
// SHA-256, revocable on the server), idle and absolute expiry, the per-session CSRF token, and
// the account (team) the console acts on. Throttling of sign-in attempts is the HTTP layer's.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { newSecretToken, sha256Hex } from '../db/ids.ts';
import type { Role, SessionRow, UserRow } from '../db/user-tables.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import { ROLE_SCOPES } from './scopes.ts';
import { normalizeEmail, verifyUserPassword } from './users.ts';

/** last_seen_at is refreshed at most this often (a write per request would serialise SQLite). */
const TOUCH_RESOLUTION_MS = 60_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface SessionSettings {
  /** A session unused for this long ends. */
  idleTimeoutSeconds: number;
  /** A session ends this long after sign-in, however active. */
  maxAgeSeconds: number;
}

export interface ConsoleSession {
  session: SessionRow;
  user: UserRow;
  /** The account the console acts on and the user's role there; null when they belong to none. */
  account: { id: string; name: string; role: Role } | null;
}

export type SessionLookup = { status: 'ok'; value: ConsoleSession } | { status: 'expired' } | { status: 'unknown' };

export class SessionService {
  readonly #db: Db;
  readonly #settings: SessionSettings;
  readonly #csrfKey: Buffer;
  readonly #now: () => Date;

  constructor(options: { db: Db; settings: SessionSettings; csrfKey: Buffer; now?: () => Date }) {
    this.#db = options.db;
    this.#settings = options.settings;
    this.#csrfKey = options.csrfKey;
    this.#now = options.now ?? (() => new Date());
  }

  get settings(): SessionSettings {
    return this.#settings;
  }

  /** Checks email and password; AppError `credentials_invalid` whichever of the two is wrong. */
  async verifyCredentials(email: string, password: string): Promise<UserRow> {
    let normalized: string | null = null;
    try {
      normalized = normalizeEmail(email);
    } catch {
      // An impossible email cannot match a user; still pay for one scrypt below.
    }
    const user = normalized === null ? null : await this.#db.repos.users.findByEmail(normalized);
    if (!(await verifyUserPassword(user, password)) || user === null) throw new AppError('credentials_invalid');
    return user;
  }

  /** Starts a session for the user (in `accountId`, else their first account). The token goes in the cookie. */
  async start(user: UserRow, meta: { remote: string | null; userAgent: string | null; accountId?: string }): Promise<{ token: string; session: SessionRow }> {
    const memberships = await this.#db.repos.users.memberships(user.id);
    const accountId = memberships.find((m) => m.account_id === meta.accountId)?.account_id ?? memberships[0]?.account_id ?? null;
    const token = newSecretToken();
    const session = await this.#db.repos.sessions.create({
      userId: user.id,
      accountId,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(this.#now().getTime() + this.#settings.maxAgeSeconds * 1000),
      remote: meta.remote,
      userAgent: meta.userAgent,
    });
    return { token, session };
  }

  /** Resolves a cookie token: the live session, `expired` (idle, absolute, revoked) or `unknown`. */
  async authenticate(token: string): Promise<SessionLookup> {
    if (!TOKEN.test(token)) return { status: 'unknown' };
    const hash = sha256Hex(token);
    const session = await this.#db.repos.sessions.findByTokenHash(hash);
    if (session === null || !timingSafeEqual(Buffer.from(session.token_hash, 'hex'), Buffer.from(hash, 'hex'))) return { status: 'unknown' };
    const now = this.#now();
    const idleEnd = Date.parse(session.last_seen_at) + this.#settings.idleTimeoutSeconds * 1000;
    if (session.revoked_at !== null || Date.parse(session.expires_at) <= now.getTime() || idleEnd <= now.getTime()) return { status: 'expired' };
    const user = await this.#db.repos.users.findById(session.user_id);
    if (user === null) return { status: 'expired' };
    if (now.getTime() - Date.parse(session.last_seen_at) > TOUCH_RESOLUTION_MS) {
      await this.#db.repos.sessions.touch(session.id, now);
      session.last_seen_at = now.toISOString();
    }
    return { status: 'ok', value: { session, user, account: await this.#account(session) } };
  }

  /** The session's account, falling back to the user's first one when they left it. */
  async #account(session: SessionRow): Promise<ConsoleSession['account']> {
    const memberships = await this.#db.repos.users.memberships(session.user_id);
    const chosen = memberships.find((m) => m.account_id === session.account_id) ?? memberships[0] ?? null;
    if ((chosen?.account_id ?? null) !== session.account_id) {
      await this.#db.repos.sessions.setAccount(session.id, chosen?.account_id ?? null);
      session.account_id = chosen?.account_id ?? null;
    }
    return chosen === null ? null : { id: chosen.account_id, name: chosen.account_name, role: chosen.role };
  }

  /** The principal a console session acts as: its account with the scopes of the user's role. */
  principal(context: ConsoleSession): Principal | null {
    if (context.account === null) return null;
    return { accountId: context.account.id, keyId: context.session.id, scopes: new Set(ROLE_SCOPES[context.account.role]), user: { id: context.user.id, role: context.account.role } };
  }

  /** The CSRF token of a session: an HMAC of its cookie token, so it needs no storage and dies with the session. */
  csrfToken(sessionToken: string): string {
    return createHmac('sha256', this.#csrfKey).update(`csrf\n${sessionToken}`).digest('base64url');
  }

  checkCsrf(sessionToken: string, presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const expected = Buffer.from(this.csrfToken(sessionToken));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  async switchAccount(context: ConsoleSession, accountId: string): Promise<void> {
    const membership = await this.#db.repos.users.membership(accountId, context.user.id);
    if (membership === null) throw new AppError('not_found', `You are not a member of ${accountId}.`);
    await this.#db.repos.sessions.setAccount(context.session.id, accountId);
  }

  async signOut(sessionId: string): Promise<void> {
    await this.#db.repos.sessions.revoke(sessionId);
  }

  /** "Sign out everywhere": every session of the user ends, this one included. */
  async signOutEverywhere(userId: string): Promise<number> {
    return this.#db.repos.sessions.revokeAllForUser(userId);
  }

  async memberships(userId: string) {
    return this.#db.repos.users.memberships(userId);
  }

  async liveSessions(userId: string): Promise<SessionRow[]> {
    return this.#db.repos.sessions.listForUser(userId, this.#now());
  }
}
