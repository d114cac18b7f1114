// Invitations by link: an admin invites an email with a role and gets a link to hand over (no mail
// server needed). Opening it, a new person chooses a password; someone who already has a user
// confirms with theirs. The link works once, for seven days.
import type { Db } from '../db/database.ts';
import { newSecretToken, sha256Hex } from '../db/ids.ts';
import type { InvitationRow, Role, UserRow } from '../db/user-tables.ts';
import { hashPassword } from '../distribution/access.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import { isRole, outranks } from './scopes.ts';
import { checkNewPassword, normalizeEmail, verifyUserPassword } from './users.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

/** What an invitation link shows before it is accepted. */
export interface InvitationLookup {
  accountName: string;
  email: string;
  role: Role;
  /** The email already has a user: accepting asks for their password instead of a new one. */
  userExists: boolean;
  expiresAt: string;
}


export class InvitationService {
  readonly #db: Db;
  readonly #baseUrl: () => string;

  constructor(options: { db: Db; baseUrl: () => string }) {
    this.#db = options.db;
    this.#baseUrl = options.baseUrl;
  }

  async create(principal: Principal, input: { email: string; role: string }, now = new Date()): Promise<{ invitation: InvitationRow; url: string }> {
    const email = normalizeEmail(input.email);
    if (!isRole(input.role)) throw new AppError('invalid_request', 'role must be owner, admin, developer or viewer', { details: { field: 'role' } });
    if (input.role === 'owner' && principal.user?.role !== 'owner') throw new AppError('owner_required', 'Only an owner can invite an owner.');
    if (principal.user && !outranks(principal.user.role, input.role)) throw new AppError('insufficient_scope', `A ${principal.user.role} cannot invite a ${input.role}.`);
    const existing = await this.#db.repos.users.findByEmail(email);
    if (existing && (await this.#db.repos.users.membership(principal.accountId, existing.id))) {
      throw new AppError('email_taken', `${email} is already a member of this account.`, { details: { field: 'email' } });
    }
    const token = newSecretToken();
    const row = await this.#db.repos.invitations.create({
      accountId: principal.accountId,
      email,
      role: input.role,
      tokenHash: sha256Hex(token),
      invitedBy: principal.user?.id ?? null,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
    });
    return { invitation: row, url: `${this.#baseUrl()}/invite?token=${token}` };
  }

  async list(principal: Principal, now = new Date()): Promise<InvitationRow[]> {
    return this.#db.repos.invitations.listOpen(principal.accountId, now);
  }

  async revoke(principal: Principal, id: string): Promise<void> {
    if (!(await this.#db.repos.invitations.revoke(principal.accountId, id))) throw new AppError('invitation_not_found', `No open invitation ${id}.`);
  }

  async lookup(token: string, now = new Date()): Promise<InvitationLookup> {
    const row = await this.#open(token, now);
    const account = await this.#db.repos.accounts.findById(row.account_id);
    if (account === null) throw new AppError('invitation_invalid');
    return { accountName: account.name, email: row.email, role: row.role, userExists: (await this.#db.repos.users.findByEmail(row.email)) !== null, expiresAt: row.expires_at };
  }

  /** Joins the invited account: as a new user with `password`, or as the existing one if it is theirs. */
  async accept(token: string, input: { password: string; name?: string | null }, now = new Date()): Promise<{ user: UserRow; accountId: string }> {
    const row = await this.#open(token, now);
    const existing = await this.#db.repos.users.findByEmail(row.email);
    if (existing !== null) {
      if (!(await verifyUserPassword(existing, input.password))) throw new AppError('credentials_invalid', 'The password is not the one of the existing user with this email.');
    } else {
      checkNewPassword(input.password);
    }
    const passwordHash = existing === null ? await hashPassword(input.password) : null;
    const user = await this.#db.transaction(async (tx) => {
      if (!(await tx.repos.invitations.accept(row.id))) throw new AppError('invitation_invalid');
      const joined = existing ?? (await tx.repos.users.create({ email: row.email, name: input.name ?? null, passwordHash: passwordHash! }));
      await tx.repos.users.addMember(row.account_id, joined.id, row.role);
      return joined;
    });
    return { user, accountId: row.account_id };
  }

  async #open(token: string, now: Date): Promise<InvitationRow> {
    const row = /^[A-Za-z0-9_-]{43}$/.test(token) ? await this.#db.repos.invitations.findByTokenHash(sha256Hex(token)) : null;
    if (row === null || row.accepted_at !== null || row.revoked_at !== null || row.expires_at <= now.toISOString()) throw new AppError('invitation_invalid');
    return row;
  }
}
