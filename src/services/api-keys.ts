// API keys: the one place keys are created, listed, revoked and checked, by the CLI and by the
// console's routes. Generation, hashing (SHA-256, never the key itself) and the constant-time
// comparison live in the ApiKeyRepository; this service adds accounts by name, scopes and
// expiry. Keys made with the CLI (and those made before scopes existed) have every scope.
import { AppError } from '../errors.ts';
import type { AccountRepository, ApiKeyRepository } from '../db/repositories.ts';
import type { ApiKeyRow } from '../db/schema.ts';
import type { Principal } from './principal.ts';
import { parseScopes, SCOPES, type Scope } from './scopes.ts';

export const DEFAULT_ACCOUNT = 'default';
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface ApiKeyInfo {
  id: string;
  account: string;
  label: string | null;
  prefix: string;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

function info(row: ApiKeyRow, account: string): ApiKeyInfo {
  return {
    id: row.id,
    account,
    label: row.label,
    prefix: row.key_prefix,
    scopes: [...parseScopes(row.scopes)],
    created_at: row.created_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

/** Scopes as given by a caller: known names, at least one, no duplicates; in catalogue order. */
export function checkScopes(given: readonly string[]): Scope[] {
  const unknown = given.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new AppError('invalid_request', `unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}`, { details: { field: 'scopes' } });
  if (given.length === 0) throw new AppError('invalid_request', 'a key needs at least one scope', { details: { field: 'scopes' } });
  return SCOPES.filter((s) => given.includes(s));
}

export class ApiKeyService {
  private readonly accounts: AccountRepository;
  private readonly keys: ApiKeyRepository;

  constructor(repos: { accounts: AccountRepository; apiKeys: ApiKeyRepository }) {
    this.accounts = repos.accounts;
    this.keys = repos.apiKeys;
  }

  /** Creates a key for the account (creating the account if missing). The key is returned only here. */
  async create(accountName: string, label: string | null = null, options: { scopes?: readonly string[]; expiresAt?: Date | null } = {}): Promise<{ key: string; info: ApiKeyInfo }> {
    if (!ACCOUNT_NAME.test(accountName)) {
      throw new AppError('invalid_request', 'account names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
    }
    const scopes = checkScopes(options.scopes ?? SCOPES);
    const account = await this.accounts.ensure(accountName);
    const { key, apiKey } = await this.keys.create({ accountId: account.id, label, scopes, expiresAt: options.expiresAt ?? null });
    return { key, info: info(apiKey, account.name) };
  }

  /** A key made through the API or console: never with a scope its maker lacks. */
  async createFor(principal: Principal, input: { label: string | null; scopes: readonly string[]; expiresAt: Date | null }, now = new Date()): Promise<{ key: string; info: ApiKeyInfo }> {
    const scopes = checkScopes(input.scopes);
    const beyond = scopes.filter((s) => !principal.scopes.has(s));
    if (beyond.length > 0) throw new AppError('insufficient_scope', `You cannot give a key scopes you do not have: ${beyond.join(', ')}.`, { details: { field: 'scopes' } });
    if (input.expiresAt !== null && input.expiresAt.getTime() <= now.getTime()) {
      throw new AppError('invalid_request', 'expires_at must be in the future', { details: { field: 'expires_at' } });
    }
    const account = await this.accounts.findById(principal.accountId);
    if (!account) throw new AppError('not_found', 'The account no longer exists.');
    const { key, apiKey } = await this.keys.create({ accountId: account.id, label: input.label, scopes, expiresAt: input.expiresAt, createdBy: principal.user?.id ?? null });
    return { key, info: info(apiKey, account.name) };
  }

  async list(accountName: string): Promise<ApiKeyInfo[]> {
    const account = await this.accounts.findByName(accountName);
    if (!account) throw new AppError('not_found', `No account named "${accountName}".`);
    return (await this.keys.list(account.id)).map((row) => info(row, account.name));
  }

  async listFor(principal: Principal): Promise<ApiKeyInfo[]> {
    const account = await this.accounts.findById(principal.accountId);
    if (!account) throw new AppError('not_found', 'The account no longer exists.');
    return (await this.keys.list(account.id)).map((row) => info(row, account.name));
  }

  /** Revokes a key by id, whatever its account (an operator command). False if unknown or already revoked. */
  revoke(keyId: string): Promise<boolean> {
    return this.keys.revoke(null, keyId);
  }

  async revokeFor(principal: Principal, keyId: string): Promise<void> {
    if (!(await this.keys.revoke(principal.accountId, keyId))) throw new AppError('api_key_not_found', `No active API key ${keyId} in this account.`);
  }

  /** The caller behind a presented key, or null (unknown, malformed, revoked or expired). */
  async authenticate(token: string): Promise<Principal | null> {
    const found = await this.keys.authenticate(token);
    return found ? { accountId: found.account.id, keyId: found.apiKey.id, scopes: parseScopes(found.apiKey.scopes), user: null } : null;
  }
}
