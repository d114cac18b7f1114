// Certificate kinds for every profile type Signet signs with (#15): certificates uploaded as
// ios_enterprise whose profiles are all ad-hoc (or all development) become ios_adhoc (or
// ios_development), so the kind says where their builds install. Certificates with in-house
// profiles, mixed ones and those without profiles keep ios_enterprise.
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  for (const [kind, type] of [
    ['ios_adhoc', 'ad-hoc'],
    ['ios_development', 'development'],
  ] as const) {
    await sql`
      UPDATE certificates SET kind = ${kind}
      WHERE kind = 'ios_enterprise'
        AND EXISTS (SELECT 1 FROM certificate_profiles p WHERE p.certificate_id = certificates.id AND p.type = ${type})
        AND NOT EXISTS (SELECT 1 FROM certificate_profiles p WHERE p.certificate_id = certificates.id AND (p.type IS NULL OR p.type <> ${type}))
    `.execute(db);
  }
}
