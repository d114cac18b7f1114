// Console sessions and the one-time tokens of the console's links (first-run setup, invitations,
// password resets). Every token is looked up by its SHA-256; the token itself is never stored.
import type { Kysely } from 'kysely';
import { newId } from '../ids.ts';
import type { Database } from '../schema.ts';
import type { InvitationRow, Role, SessionRow } from '../user-tables.ts';
import { nowIso } from './pagination.ts';

export interface SessionRepository {
  create(input: { userId: string; accountId: string | null; tokenHash: string; expiresAt: Date; remote: string | null; userAgent: string | null }): Promise<SessionRow>;
  findByTokenHash(tokenHash: string): Promise<SessionRow | null>;
  touch(id: string, at: Date): Promise<void>;
  setAccount(id: string, accountId: string | null): Promise<void>;
  revoke(id: string): Promise<void>;
  /** Revokes every live session of the user (but `exceptId`); returns how many. */
  revokeAllForUser(userId: string, exceptId?: string): Promise<number>;
  /** Live sessions of the user, newest first. */
  listForUser(userId: string, now: Date): Promise<SessionRow[]>;
}

export interface SetupTokenRepository {
  create(tokenHash: string, expiresAt: Date): Promise<void>;
  /** True when the token exists and has not expired. */
  isValid(tokenHash: string, now: Date): Promise<boolean>;
  /** Deletes every setup token (the first owner exists); returns how many there were. */
  clear(): Promise<number>;
}

export interface InvitationRepository {
  create(input: { accountId: string; email: string; role: Role; tokenHash: string; invitedBy: string | null; expiresAt: Date }): Promise<InvitationRow>;
  findByTokenHash(tokenHash: string): Promise<InvitationRow | null>;
  /** Open invitations (not accepted, revoked or expired), newest first. */
  listOpen(accountId: string, now: Date): Promise<InvitationRow[]>;
  revoke(accountId: string, id: string): Promise<boolean>;
  /** Marks it accepted unless it already was (or was revoked); false when another request won. */
  accept(id: string): Promise<boolean>;
}

export interface PasswordResetRepository {
  create(input: { userId: string; tokenHash: string; expiresAt: Date }): Promise<void>;
  /** The user id of an unused, unexpired reset, or null. */
  find(tokenHash: string, now: Date): Promise<string | null>;
  /** Marks it used; false when it already was. */
  use(tokenHash: string): Promise<boolean>;
}

export function sessionRepository(db: Kysely<Database>): SessionRepository {
  return {
    async create(input) {
      const now = nowIso();
      return db
        .insertInto('sessions')
        .values({
          id: newId('ses'),
          user_id: input.userId,
          account_id: input.accountId,
          token_hash: input.tokenHash,
          created_at: now,
          last_seen_at: now,
          expires_at: nowIso(input.expiresAt),
          revoked_at: null,
          remote: input.remote,
          user_agent: input.userAgent?.slice(0, 300) ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    findByTokenHash: async (tokenHash) => (await db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()) ?? null,
    async touch(id, at) {
      await db.updateTable('sessions').set({ last_seen_at: nowIso(at) }).where('id', '=', id).execute();
    },
    async setAccount(id, accountId) {
      await db.updateTable('sessions').set({ account_id: accountId }).where('id', '=', id).execute();
    },
    async revoke(id) {
      await db.updateTable('sessions').set({ revoked_at: nowIso() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    },
    async revokeAllForUser(userId, exceptId) {
      let query = db.updateTable('sessions').set({ revoked_at: nowIso() }).where('user_id', '=', userId).where('revoked_at', 'is', null);
      if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
      return Number((await query.executeTakeFirst()).numUpdatedRows);
    },
    listForUser: (userId, now) =>
      db
        .selectFrom('sessions')
        .selectAll()
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', nowIso(now))
        .orderBy('created_at', 'desc')
        .execute(),
  };
}

export function setupTokenRepository(db: Kysely<Database>): SetupTokenRepository {
  return {
    async create(tokenHash, expiresAt) {
      await db.insertInto('setup_tokens').values({ token_hash: tokenHash, created_at: nowIso(), expires_at: nowIso(expiresAt) }).execute();
    },
    async isValid(tokenHash, now) {
      const row = await db.selectFrom('setup_tokens').select('expires_at').where('token_hash', '=', tokenHash).executeTakeFirst();
      return row !== undefined && row.expires_at > nowIso(now);
    },
    async clear() {
      return Number((await db.deleteFrom('setup_tokens').executeTakeFirst()).numDeletedRows);
    },
  };
}

export function invitationRepository(db: Kysely<Database>): InvitationRepository {
  return {
    async create(input) {
      return db
        .insertInto('invitations')
        .values({
          id: newId('inv'),
          account_id: input.accountId,
          email: input.email.toLowerCase(),
          role: input.role,
          token_hash: input.tokenHash,
          invited_by: input.invitedBy,
          created_at: nowIso(),
          expires_at: nowIso(input.expiresAt),
          accepted_at: null,
          revoked_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    findByTokenHash: async (tokenHash) => (await db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()) ?? null,
    listOpen: (accountId, now) =>
      db
        .selectFrom('invitations')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', nowIso(now))
        .orderBy('created_at', 'desc')
        .execute(),
    async revoke(accountId, id) {
      const result = await db
        .updateTable('invitations')
        .set({ revoked_at: nowIso() })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async accept(id) {
      const result = await db
        .updateTable('invitations')
        .set({ accepted_at: nowIso() })
        .where('id', '=', id)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}

export function passwordResetRepository(db: Kysely<Database>): PasswordResetRepository {
  return {
    async create({ userId, tokenHash, expiresAt }) {
      await db.insertInto('password_resets').values({ token_hash: tokenHash, user_id: userId, created_at: nowIso(), expires_at: nowIso(expiresAt), used_at: null }).execute();
    },
    async find(tokenHash, now) {
      const row = await db.selectFrom('password_resets').select(['user_id', 'expires_at', 'used_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
      return row && row.used_at === null && row.expires_at > nowIso(now) ? row.user_id : null;
    },
    async use(tokenHash) {
      const result = await db.updateTable('password_resets').set({ used_at: nowIso() }).where('token_hash', '=', tokenHash).where('used_at', 'is', null).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
