// Console users and their memberships in accounts (teams). Emails are stored lowercased so that
// "Ann@Example.com" and "ann@example.com" are one user.
import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import { newId } from '../ids.ts';
import type { Database } from '../schema.ts';
import type { MembershipRow, Role, UserRow } from '../user-tables.ts';
import { nowIso } from './pagination.ts';

export interface MemberRow extends MembershipRow {
  email: string;
  name: string | null;
}

export interface UserMembership {
  account_id: string;
  account_name: string;
  role: Role;
}

export interface UserRepository {
  count(): Promise<number>;
  /** AppError `email_taken` when the email is already registered. */
  create(input: { email: string; name: string | null; passwordHash: string }): Promise<UserRow>;
  findById(id: string): Promise<UserRow | null>;
  findByEmail(email: string): Promise<UserRow | null>;
  setPassword(userId: string, passwordHash: string): Promise<void>;
  /** The user's accounts with their role, in the order they joined. */
  memberships(userId: string): Promise<UserMembership[]>;
  membership(accountId: string, userId: string): Promise<MembershipRow | null>;
  /** Adds the membership; an existing one keeps its role. Returns the stored row. */
  addMember(accountId: string, userId: string, role: Role): Promise<MembershipRow>;
  setRole(accountId: string, userId: string, role: Role): Promise<boolean>;
  removeMember(accountId: string, userId: string): Promise<boolean>;
  /** Members of the account, oldest first. */
  members(accountId: string): Promise<MemberRow[]>;
  countOwners(accountId: string): Promise<number>;
  /** Accounts nobody is a member of yet (made with the CLI before users existed). */
  accountsWithoutMembers(): Promise<Array<{ id: string; name: string }>>;
}

export function userRepository(db: Kysely<Database>): UserRepository {
  const membership = async (accountId: string, userId: string) =>
    (await db.selectFrom('memberships').selectAll().where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst()) ?? null;

  return {
    async count() {
      const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async create({ email, name, passwordHash }) {
      const now = nowIso();
      const row = await db
        .insertInto('users')
        .values({ id: newId('usr'), email: email.toLowerCase(), name, password_hash: passwordHash, created_at: now, password_changed_at: now })
        .onConflict((oc) => oc.column('email').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new AppError('email_taken', `A user with the email ${email} already exists.`, { details: { field: 'email' } });
      return row;
    },
    findById: async (id) => (await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()) ?? null,
    findByEmail: async (email) => (await db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst()) ?? null,
    async setPassword(userId, passwordHash) {
      await db.updateTable('users').set({ password_hash: passwordHash, password_changed_at: nowIso() }).where('id', '=', userId).execute();
    },
    memberships: (userId) =>
      db
        .selectFrom('memberships')
        .innerJoin('accounts', 'accounts.id', 'memberships.account_id')
        .select(['memberships.account_id', 'accounts.name as account_name', 'memberships.role'])
        .where('memberships.user_id', '=', userId)
        .orderBy('memberships.created_at')
        .orderBy('accounts.name')
        .execute(),
    membership,
    async addMember(accountId, userId, role) {
      await db
        .insertInto('memberships')
        .values({ account_id: accountId, user_id: userId, role, created_at: nowIso() })
        .onConflict((oc) => oc.columns(['account_id', 'user_id']).doNothing())
        .execute();
      const row = await membership(accountId, userId);
      if (!row) throw new AppError('internal_error', `membership of ${userId} in ${accountId} vanished`);
      return row;
    },
    async setRole(accountId, userId, role) {
      const result = await db.updateTable('memberships').set({ role }).where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async removeMember(accountId, userId) {
      const result = await db.deleteFrom('memberships').where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    members: (accountId) =>
      db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .selectAll('memberships')
        .select(['users.email', 'users.name'])
        .where('memberships.account_id', '=', accountId)
        .orderBy('memberships.created_at')
        .orderBy('users.email')
        .execute(),
    async countOwners(accountId) {
      const row = await db
        .selectFrom('memberships')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    accountsWithoutMembers: () =>
      db
        .selectFrom('accounts')
        .select(['accounts.id', 'accounts.name'])
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('memberships').select('memberships.user_id').whereRef('memberships.account_id', '=', 'accounts.id'))))
        .orderBy('accounts.created_at')
        .execute(),
  };
}
