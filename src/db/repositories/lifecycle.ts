// Revocation answers (cached by certificate fingerprint) and recorded health states (migration 0010).
import type { Kysely } from 'kysely';
import type { RevocationCheckRow } from '../lifecycle-tables.ts';
import type { CertificateRow, Database } from '../schema.ts';
import type { DeveloperAccountRow } from '../super-tables.ts';
import { nowIso } from './pagination.ts';

/** Revocation answers by certificate fingerprint, and recorded health states (migration 0010). */
export interface LifecycleRepository {
  findRevocation(fingerprint: string): Promise<RevocationCheckRow | null>;
  findRevocations(fingerprints: readonly string[]): Promise<Map<string, RevocationCheckRow>>;
  /** Inserts or replaces the row of `row.fingerprint`. */
  saveRevocation(row: RevocationCheckRow): Promise<void>;
  /** Every certificate of every account (the periodic check); no secrets are opened. */
  allCertificates(): Promise<CertificateRow[]>;
  allDeveloperAccounts(): Promise<DeveloperAccountRow[]>;
  /**
   * Records `state` as the health of a certificate or developer account; true only for the one
   * caller that changed it (compare-and-set), so a change is announced once.
   */
  recordHealth(table: 'certificates' | 'developer_accounts', id: string, state: string, at: Date): Promise<{ changed: boolean; previous: string | null }>;
}

export function lifecycleRepository(db: Kysely<Database>): LifecycleRepository {
  return {
    async findRevocation(fingerprint) {
      return (await db.selectFrom('revocation_checks').selectAll().where('fingerprint', '=', fingerprint).executeTakeFirst()) ?? null;
    },

    async findRevocations(fingerprints) {
      const out = new Map<string, Awaited<ReturnType<LifecycleRepository['findRevocation']>> & object>();
      if (fingerprints.length === 0) return out;
      const rows = await db.selectFrom('revocation_checks').selectAll().where('fingerprint', 'in', [...new Set(fingerprints)]).execute();
      for (const row of rows) out.set(row.fingerprint, row);
      return out;
    },

    async saveRevocation(row) {
      const { fingerprint, created_at: _created, ...rest } = row;
      await db
        .insertInto('revocation_checks')
        .values(row)
        .onConflict((oc) => oc.column('fingerprint').doUpdateSet(rest))
        .execute();
      void fingerprint;
    },

    allCertificates: () => db.selectFrom('certificates').selectAll().orderBy('created_at').execute(),
    allDeveloperAccounts: () => db.selectFrom('developer_accounts').selectAll().orderBy('created_at').execute(),

    async recordHealth(table, id, state, at) {
      const before = await db.selectFrom(table).select('health_state').where('id', '=', id).executeTakeFirst();
      if (before === undefined) return { changed: false, previous: null };
      const previous = before.health_state;
      if (previous === state) return { changed: false, previous };
      // Compare-and-set on the value read: of two processes recording the same change, one wins.
      let update = db.updateTable(table).set({ health_state: state, health_changed_at: nowIso(at) }).where('id', '=', id);
      update = previous === null ? update.where('health_state', 'is', null) : update.where('health_state', '=', previous);
      const result = await update.executeTakeFirst();
      return { changed: result.numUpdatedRows > 0n, previous };
    },
  };
}
