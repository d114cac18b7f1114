// Super signature rotation (#15): a profile retired because its developer account's distribution
// certificate was replaced (not merely superseded by a newer device list). Builds made with such a
// profile are signed with the old certificate, so a device asking for one gets a new build.
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable('super_profiles').addColumn('retired_at', 'text').execute();
}
