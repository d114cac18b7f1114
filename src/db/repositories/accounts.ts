// Accounts and their API keys. Keys are stored only as SHA-256 (a leaked database yields no usable
// key), and the per-account webhook secret is sealed because Signet must read it back to sign.
import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import { API_KEY_PATTERN, newApiKey, newId, newWebhookSecret, sha256Hex } from '../ids.ts';
import type { AccountRow, ApiKeyRow, Database } from '../schema.ts';
import { SCOPES, type Scope } from '../user-tables.ts';
import type { SecretBox } from '../secret-box.ts';
import { nowIso } from './pagination.ts';

export interface AccountRepository {
  /** Creates the account with a fresh webhook secret. AppError `invalid_request` if the name is taken. */
  create(name: string): Promise<AccountRow>;
  /** The account with this name, created first if missing (for `signet keys create --account`). */
  ensure(name: string): Promise<AccountRow>;
  findById(id: string): Promise<AccountRow | null>;
  findByName(name: string): Promise<AccountRow | null>;
  list(): Promise<AccountRow[]>;
  /** The plaintext webhook secret (`whsec_…`) used to sign this account's webhook bodies. */
  webhookSecret(accountId: string): Promise<string>;
  /** Replaces the webhook secret and returns the new plaintext. */
  rotateWebhookSecret(accountId: string): Promise<string>;
  /** Bytes the account keeps in storage: its uploads (until swept) and its tasks' signed artifacts. */
  storedBytes(accountId: string): Promise<number>;
}

export interface ApiKeyRepository {
  /** Generates `sk_` + base62(32 random bytes); `key` is returned this once and only its SHA-256 is stored. */
  create(input: { accountId: string; label?: string | null; scopes?: readonly Scope[]; expiresAt?: Date | null; createdBy?: string | null }): Promise<{ key: string; apiKey: ApiKeyRow }>;
  /**
   * Resolves a presented key to its account, or null (unknown, malformed, revoked or expired). The lookup
   * is by SHA-256, then the stored and computed hashes are compared in constant time.
   * Updates last_used_at at most once a minute per key.
   */
  authenticate(key: string): Promise<{ apiKey: ApiKeyRow; account: AccountRow } | null>;
  list(accountId: string): Promise<ApiKeyRow[]>;
  /**
   * Revokes the key; returns false when it does not exist in that account (or is already
   * revoked). `accountId` null: whatever its account (the operator's `signet keys revoke`).
   */
  revoke(accountId: string | null, id: string): Promise<boolean>;
}

const webhookSecretContext = (accountId: string): string => `accounts.webhook_secret:${accountId}`;

export function accountRepository(db: Kysely<Database>, box: SecretBox): AccountRepository {
  const findById = async (id: string): Promise<AccountRow | null> =>
    (await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  const findByName = async (name: string): Promise<AccountRow | null> =>
    (await db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst()) ?? null;

  // Returns null instead of throwing when the name is taken, so `ensure` can fall back to the winner.
  const insert = async (name: string): Promise<AccountRow | null> => {
    if (name.trim() === '' || name.length > 200) {
      throw new AppError('invalid_request', 'account name must be 1–200 characters', { details: { field: 'account' } });
    }
    const id = newId('acc');
    const row = await db
      .insertInto('accounts')
      .values({
        id,
        name,
        webhook_secret_sealed: box.seal(newWebhookSecret(), webhookSecretContext(id)),
        created_at: nowIso(),
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .returningAll()
      .executeTakeFirst();
    return row ?? null;
  };

  return {
    async create(name) {
      const row = await insert(name);
      if (row === null) throw new AppError('invalid_request', `account "${name}" already exists`, { details: { field: 'account' } });
      return row;
    },
    async ensure(name) {
      const existing = await findByName(name);
      if (existing !== null) return existing;
      const created = await insert(name);
      if (created !== null) return created;
      const winner = await findByName(name);
      if (winner === null) throw new AppError('internal_error', `account "${name}" vanished while being created`);
      return winner;
    },
    findById,
    findByName,
    list: () => db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute(),
    async webhookSecret(accountId) {
      const row = await findById(accountId);
      if (row === null) throw new AppError('not_found', `no account ${accountId}`);
      return box.openString(row.webhook_secret_sealed, webhookSecretContext(accountId));
    },
    async rotateWebhookSecret(accountId) {
      const secret = newWebhookSecret();
      const result = await db
        .updateTable('accounts')
        .set({ webhook_secret_sealed: box.seal(secret, webhookSecretContext(accountId)) })
        .where('id', '=', accountId)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw new AppError('not_found', `no account ${accountId}`);
      return secret;
    },
    async storedBytes(accountId) {
      const uploads = await db.selectFrom('uploads').select((eb) => eb.fn.sum<number | string | null>('size').as('bytes')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
      const artifacts = await db
        .selectFrom('tasks')
        .select((eb) => eb.fn.sum<number | string | null>('artifact_size').as('bytes'))
        .where('account_id', '=', accountId)
        .where('artifact_size', 'is not', null)
        .executeTakeFirstOrThrow();
      return Number(uploads.bytes ?? 0) + Number(artifacts.bytes ?? 0);
    },
  };
}

// last_used_at is informational; writing it on every request would turn each read into a write
// (and on SQLite, take the single writer lock), so it is refreshed at most once a minute.
const LAST_USED_RESOLUTION_MS = 60_000;

export function apiKeyRepository(db: Kysely<Database>): ApiKeyRepository {
  return {
    async create({ accountId, label = null, scopes = SCOPES, expiresAt = null, createdBy = null }) {
      const key = newApiKey();
      const apiKey: ApiKeyRow = {
        id: newId('key'),
        account_id: accountId,
        label,
        key_hash: sha256Hex(key),
        key_prefix: key.slice(0, 7),
        created_at: nowIso(),
        last_used_at: null,
        revoked_at: null,
        scopes: scopes.join(' '),
        expires_at: expiresAt === null ? null : nowIso(expiresAt),
        created_by: createdBy,
      };
      await db.insertInto('api_keys').values(apiKey).execute();
      return { key, apiKey };
    },
    async authenticate(key) {
      if (!API_KEY_PATTERN.test(key)) return null;
      const hash = sha256Hex(key);
      const found = await db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .selectAll('api_keys')
        .select(['accounts.name as account_name', 'accounts.webhook_secret_sealed', 'accounts.created_at as account_created_at'])
        .where('api_keys.key_hash', '=', hash)
        .executeTakeFirst();
      // The index lookup already matched the hash; the constant-time compare is belt and braces
      // so that no code path ever compares key material with an early-exit `===`.
      if (found === undefined || !timingSafeEqual(Buffer.from(found.key_hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
      if (found.revoked_at !== null) return null;
      if (found.expires_at !== null && found.expires_at <= nowIso()) return null;
      const { account_name, webhook_secret_sealed, account_created_at, ...apiKey } = found;
      const now = Date.now();
      if (apiKey.last_used_at === null || now - Date.parse(apiKey.last_used_at) > LAST_USED_RESOLUTION_MS) {
        apiKey.last_used_at = new Date(now).toISOString();
        await db.updateTable('api_keys').set({ last_used_at: apiKey.last_used_at }).where('id', '=', apiKey.id).execute();
      }
      return {
        apiKey,
        account: { id: apiKey.account_id, name: account_name, webhook_secret_sealed, created_at: account_created_at },
      };
    },
    list: (accountId) =>
      db
        .selectFrom('api_keys')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute(),
    async revoke(accountId, id) {
      let query = db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', '=', id).where('revoked_at', 'is', null);
      if (accountId !== null) query = query.where('account_id', '=', accountId);
      const result = await query.executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
