// Console users and the members of an account: creating users (first-run setup, invitations,
// `signet users create`), roles, removal, and password changes and resets. Passwords are hashed
// with scrypt exactly like install-link passwords (src/distribution/access.ts).
import type { Db } from '../db/database.ts';
import { newSecretToken, sha256Hex } from '../db/ids.ts';
import type { MemberRow } from '../db/repositories/users.ts';
import type { AccountRow } from '../db/schema.ts';
import type { Role, UserRow } from '../db/user-tables.ts';
import { hashPassword, verifyPassword } from '../distribution/access.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import { isRole, outranks } from './scopes.ts';

export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 200;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** How long an owner's password-reset link works. */
export const RESET_TTL_MS = 24 * 3600_000;

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw new AppError('invalid_request', 'email must be an email address', { details: { field: 'email' } });
  return email;
}

export function checkNewPassword(password: string, field = 'password'): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new AppError('invalid_request', `${field} must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`, { details: { field } });
  }
}

export function checkAccountName(name: string): void {
  if (!ACCOUNT_NAME.test(name)) {
    throw new AppError('invalid_request', 'account names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit', { details: { field: 'account' } });
  }
}

// Signing in as an unknown email still costs one scrypt, so response times do not reveal which
// emails have users.
let dummyHash: Promise<string> | null = null;
export async function verifyUserPassword(user: UserRow | null, password: string): Promise<boolean> {
  if (user === null) {
    await verifyPassword(password, await (dummyHash ??= hashPassword('signet-timing-equaliser')));
    return false;
  }
  return verifyPassword(password, user.password_hash);
}

export class UserService {
  readonly #db: Db;
  readonly #baseUrl: () => string;

  constructor(options: { db: Db; baseUrl: () => string }) {
    this.#db = options.db;
    this.#baseUrl = options.baseUrl;
  }

  /**
   * Creates a user in an account (created if missing) with a role: `signet users create`. An
   * existing user is added to the account instead (their password is left alone).
   */
  async createInAccount(input: { email: string; password: string; accountName: string; role: Role; name?: string | null }): Promise<{ user: UserRow; account: AccountRow; created: boolean }> {
    const email = normalizeEmail(input.email);
    checkAccountName(input.accountName);
    const existing = await this.#db.repos.users.findByEmail(email);
    if (existing === null) checkNewPassword(input.password);
    const passwordHash = existing === null ? await hashPassword(input.password) : null;
    return this.#db.transaction(async (tx) => {
      const account = await tx.repos.accounts.ensure(input.accountName);
      const user = existing ?? (await tx.repos.users.create({ email, name: input.name ?? null, passwordHash: passwordHash! }));
      await tx.repos.users.addMember(account.id, user.id, input.role);
      return { user, account, created: existing === null };
    });
  }

  /** Sets a user's password and signs them out everywhere (`signet users reset-password`). */
  async setPassword(emailOrId: { email: string } | { userId: string }, password: string): Promise<UserRow> {
    checkNewPassword(password);
    const user = 'email' in emailOrId ? await this.#db.repos.users.findByEmail(normalizeEmail(emailOrId.email)) : await this.#db.repos.users.findById(emailOrId.userId);
    if (user === null) throw new AppError('not_found', 'No user with this email.');
    await this.#db.repos.users.setPassword(user.id, await hashPassword(password));
    await this.#db.repos.sessions.revokeAllForUser(user.id);
    return user;
  }

  /** A signed-in user changes their own password; their other sessions end. */
  async changePassword(userId: string, current: string, next: string, keepSessionId: string): Promise<void> {
    const user = await this.#db.repos.users.findById(userId);
    if (user === null || !(await verifyPassword(current, user.password_hash))) throw new AppError('current_password_incorrect');
    checkNewPassword(next, 'new_password');
    await this.#db.repos.users.setPassword(user.id, await hashPassword(next));
    await this.#db.repos.sessions.revokeAllForUser(user.id, keepSessionId);
  }

  async members(principal: Principal): Promise<MemberRow[]> {
    return this.#db.repos.users.members(principal.accountId);
  }

  async setRole(principal: Principal, userId: string, role: string): Promise<MemberRow> {
    if (!isRole(role)) throw new AppError('invalid_request', 'role must be owner, admin, developer or viewer', { details: { field: 'role' } });
    const member = await this.#member(principal, userId);
    // Owners are made and unmade only by owners; nobody hands out a role above their own.
    if ((member.role === 'owner' || role === 'owner') && !this.#isOwner(principal)) throw new AppError('owner_required', 'Only an owner can make or unmake owners.');
    if (principal.user && !outranks(principal.user.role, role)) throw new AppError('insufficient_scope', `A ${principal.user.role} cannot grant the ${role} role.`);
    if (member.role === 'owner' && role !== 'owner') await this.#keepAnOwner(principal.accountId);
    await this.#db.repos.users.setRole(principal.accountId, userId, role);
    return { ...(await this.#viewOf(principal, userId)) };
  }

  async remove(principal: Principal, userId: string): Promise<void> {
    const member = await this.#member(principal, userId);
    if (member.role === 'owner') {
      if (!this.#isOwner(principal)) throw new AppError('owner_required', 'Only an owner can remove an owner.');
      await this.#keepAnOwner(principal.accountId);
    }
    await this.#db.repos.users.removeMember(principal.accountId, userId);
    // Their sessions pointing at this account fall back to another account (or none) on next use.
  }

  /** An owner makes a one-time link with which a member sets a new password (no mail server needed). */
  async resetLink(principal: Principal, userId: string, now = new Date()): Promise<{ url: string; expires_at: string }> {
    if (!this.#isOwner(principal)) throw new AppError('owner_required', 'Only an owner can reset a member\'s password.');
    await this.#member(principal, userId);
    const token = newSecretToken();
    const expiresAt = new Date(now.getTime() + RESET_TTL_MS);
    await this.#db.repos.passwordResets.create({ userId, tokenHash: sha256Hex(token), expiresAt });
    return { url: `${this.#baseUrl()}/reset-password?token=${token}`, expires_at: expiresAt.toISOString() };
  }

  /** Completes a reset link: sets the password and ends every session of that user. */
  async resetWithToken(token: string, password: string, now = new Date()): Promise<UserRow> {
    const hash = sha256Hex(token);
    const userId = await this.#db.repos.passwordResets.find(hash, now);
    if (userId === null) throw new AppError('password_reset_invalid');
    checkNewPassword(password);
    if (!(await this.#db.repos.passwordResets.use(hash))) throw new AppError('password_reset_invalid');
    return this.setPassword({ userId }, password);
  }

  #isOwner(principal: Principal): boolean {
    return principal.user?.role === 'owner';
  }

  async #member(principal: Principal, userId: string) {
    const member = await this.#db.repos.users.membership(principal.accountId, userId);
    if (member === null) throw new AppError('member_not_found', `No member ${userId} in this account.`);
    return member;
  }

  async #viewOf(principal: Principal, userId: string): Promise<MemberRow> {
    const member = (await this.members(principal)).find((m) => m.user_id === userId);
    if (!member) throw new AppError('member_not_found');
    return member;
  }

  async #keepAnOwner(accountId: string): Promise<void> {
    if ((await this.#db.repos.users.countOwners(accountId)) <= 1) throw new AppError('last_owner');
  }
}
