// The explicit App IDs Signet registered in each Apple developer account, with the capabilities
// enabled on them. Rows are a cache of Apple's state that lets a device skip App Store Connect
// once its app's App IDs are known to be ready; several workers registering the same App ID meet
// on the (developer account, identifier) unique key, and each writes what Apple last told it.
import type { Kysely } from 'kysely';
import type { DeveloperAppIdRow, DeveloperAppIdState } from '../profile-tables.ts';
import type { Database } from '../schema.ts';
import { superId } from './developer-accounts.ts';
import { nowIso } from './pagination.ts';

export interface AppIdRecord {
  developerAccountId: string;
  identifier: string;
  state: DeveloperAppIdState;
  ascBundleId: string | null;
  /** The capability types enabled at Apple, as just read or written. */
  capabilities: readonly string[];
  /** True when this writer enabled a capability (profiles made before are stale). */
  changed: boolean;
  detail: string | null;
}

export interface DeveloperAppIdRepository {
  find(developerAccountId: string, identifier: string): Promise<DeveloperAppIdRow | null>;
  /** Upserts Apple's state of an App ID in this developer account. */
  record(input: AppIdRecord): Promise<DeveloperAppIdRow>;
  /** The identifiers among `identifiers` another team owns, as far as this account knows. */
  unavailable(developerAccountId: string, identifiers: readonly string[]): Promise<string[]>;
}

export function developerAppIdRepository(db: Kysely<Database>): DeveloperAppIdRepository {
  const find = async (developerAccountId: string, identifier: string) =>
    (await db.selectFrom('developer_app_ids').selectAll().where('developer_account_id', '=', developerAccountId).where('identifier', '=', identifier).executeTakeFirst()) ?? null;

  return {
    find,

    async record(input) {
      const now = nowIso();
      const capabilities = JSON.stringify([...new Set(input.capabilities)].sort());
      await db
        .insertInto('developer_app_ids')
        .values({
          id: superId('dai'),
          developer_account_id: input.developerAccountId,
          identifier: input.identifier,
          state: input.state,
          asc_bundle_id: input.ascBundleId,
          capabilities_json: capabilities,
          capabilities_changed_at: input.changed ? now : null,
          detail: input.detail,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.columns(['developer_account_id', 'identifier']).doUpdateSet((eb) => ({
            state: input.state,
            asc_bundle_id: input.ascBundleId,
            capabilities_json: capabilities,
            capabilities_changed_at: input.changed ? now : eb.ref('developer_app_ids.capabilities_changed_at'),
            detail: input.detail,
            updated_at: now,
          })),
        )
        .execute();
      return (await find(input.developerAccountId, input.identifier))!;
    },

    async unavailable(developerAccountId, identifiers) {
      if (identifiers.length === 0) return [];
      const rows = await db
        .selectFrom('developer_app_ids')
        .select('identifier')
        .where('developer_account_id', '=', developerAccountId)
        .where('identifier', 'in', [...identifiers])
        .where('state', '=', 'unavailable')
        .execute();
      return rows.map((r) => r.identifier);
    },
  };
}
