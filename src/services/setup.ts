// First run: while no user exists, every start issues a one-time setup token (printed as
// `<public url>/setup?token=…`); the first person to open it creates the first owner. Accounts
// made with the CLI before users existed (such as `default` on an upgraded install) become that
// owner's; on a fresh install the owner names their team.
import type { Db } from '../db/database.ts';
import { newSecretToken, sha256Hex } from '../db/ids.ts';
import { hashPassword } from '../distribution/access.ts';
import { AppError } from '../errors.ts';
import type { UserRow } from '../db/user-tables.ts';
import { checkAccountName, checkNewPassword, normalizeEmail } from './users.ts';

/** A setup link works for a day; restart the server for a new one. */
export const SETUP_TTL_MS = 24 * 3600_000;

export interface SetupStatus {
  /** No user exists yet. */
  needed: boolean;
  /** The token is one of the current setup tokens. */
  tokenValid: boolean;
  /** Accounts the first owner will own (made before users existed); empty on a fresh install. */
  existingAccounts: string[];
}

export class SetupService {
  readonly #db: Db;

  constructor(options: { db: Db }) {
    this.#db = options.db;
  }

  /** A fresh setup token when no user exists yet, else null. */
  async issueToken(now = new Date()): Promise<string | null> {
    if ((await this.#db.repos.users.count()) > 0) return null;
    const token = newSecretToken();
    await this.#db.repos.setupTokens.create(sha256Hex(token), new Date(now.getTime() + SETUP_TTL_MS));
    return token;
  }

  async status(token: string, now = new Date()): Promise<SetupStatus> {
    const needed = (await this.#db.repos.users.count()) === 0;
    return {
      needed,
      tokenValid: needed && (await this.#db.repos.setupTokens.isValid(sha256Hex(token), now)),
      existingAccounts: needed ? (await this.#db.repos.users.accountsWithoutMembers()).map((a) => a.name) : [],
    };
  }

  /** Creates the first owner; AppError `setup_token_invalid` when the token is wrong, expired or spent. */
  async complete(token: string, input: { email: string; password: string; accountName: string; name?: string | null }, now = new Date()): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    checkNewPassword(input.password);
    const hash = sha256Hex(token);
    if (!(await this.#db.repos.setupTokens.isValid(hash, now))) throw new AppError('setup_token_invalid');
    const passwordHash = await hashPassword(input.password);
    return this.#db.transaction(async (tx) => {
      // The tokens are the lock: of two setups racing, only the first finds any to delete.
      if (!(await tx.repos.setupTokens.isValid(hash, now)) || (await tx.repos.setupTokens.clear()) === 0) throw new AppError('setup_token_invalid');
      const user = await tx.repos.users.create({ email, name: input.name ?? null, passwordHash });
      const legacy = await tx.repos.users.accountsWithoutMembers();
      if (legacy.length === 0) {
        checkAccountName(input.accountName);
        legacy.push(await tx.repos.accounts.ensure(input.accountName));
      }
      for (const account of legacy) await tx.repos.users.addMember(account.id, user.id, 'owner');
      return user;
    });
  }
}
