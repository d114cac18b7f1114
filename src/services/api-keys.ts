// API keys: the one place keys are created, listed, revoked and checked, used by the CLI now and
// by the console's HTTP routes later. Generation, hashing (SHA-256, never the key itself) and the
// constant-time comparison live in the ApiKeyRepository; this service adds accounts by name and
// the first-start bootstrap.
import { AppError } from '../errors.ts';
import type { AccountRepository, ApiKeyRepository } from '../db/repositories.ts';
import type { ApiKeyRow } from '../db/schema.ts';
import type { Principal } from './principal.ts';

export const DEFAULT_ACCOUNT = 'default';
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface ApiKeyInfo {
  id: string;
  account: string;
  label: string | null;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

function info(row: ApiKeyRow, account: string): ApiKeyInfo {
  return {
    id: row.id,
    account,
    label: row.label,
    prefix: row.key_prefix,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

export class ApiKeyService {
  private readonly accounts: AccountRepository;
  private readonly keys: ApiKeyRepository;

  constructor(repos: { accounts: AccountRepository; apiKeys: ApiKeyRepository }) {
    this.accounts = repos.accounts;
    this.keys = repos.apiKeys;
  }

  /** Creates a key for the account (creating the account if missing). The key is returned only here. */
  async create(accountName: string, label: string | null = null): Promise<{ key: string; info: ApiKeyInfo }> {
    if (!ACCOUNT_NAME.test(accountName)) {
      throw new AppError('invalid_request', 'account names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
    }
    const account = await this.accounts.ensure(accountName);
    const { key, apiKey } = await this.keys.create({ accountId: account.id, label });
    return { key, info: info(apiKey, account.name) };
  }

  async list(accountName: string): Promise<ApiKeyInfo[]> {
    const account = await this.accounts.findByName(accountName);
    if (!account) throw new AppError('not_found', `No account named "${accountName}".`);
    return (await this.keys.list(account.id)).map((row) => info(row, account.name));
  }

  /** Revokes a key by id, whatever its account (an operator command). False if unknown or already revoked. */
  revoke(keyId: string): Promise<boolean> {
    return this.keys.revoke(null, keyId);
  }

  /** The caller behind a presented key, or null (unknown, malformed or revoked). */
  async authenticate(token: string): Promise<Principal | null> {
    const found = await this.keys.authenticate(token);
    return found ? { accountId: found.account.id, keyId: found.apiKey.id } : null;
  }

  /**
   * First start: with no account at all, creates `default` and one key for it, returned to be
   * printed once. Null when any account exists (nothing is created).
   */
  async bootstrap(): Promise<{ key: string; info: ApiKeyInfo } | null> {
    if ((await this.accounts.list()).length > 0) return null;
    // create(), not ensure(): when several nodes start at once on an empty database, only the
    // one whose insert wins prints a key.
    let account;
    try {
      account = await this.accounts.create(DEFAULT_ACCOUNT);
    } catch (error) {
      if (error instanceof AppError && error.code === 'invalid_request') return null;
      throw error;
    }
    const { key, apiKey } = await this.keys.create({ accountId: account.id, label: 'created on first start' });
    return { key, info: info(apiKey, account.name) };
  }
}
