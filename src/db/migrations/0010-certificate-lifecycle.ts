// Certificate lifecycle (#15): the revocation status of every signing certificate Signet holds
// (asked of the OCSP responder its certificate names, cached for the answer's validity), keyed by
// the certificate's fingerprint so certificates and developer accounts share it; and the health
// last recorded for each certificate and developer account (what alerts compare against).
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  const schema = db.schema;
  await schema
    .createTable('revocation_checks')
    .addColumn('fingerprint', 'text', (c) => c.primaryKey())
    .addColumn('certificate_der', 'text', (c) => c.notNull())
    .addColumn('issuer_der', 'text')
    .addColumn('ocsp_url', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('checked_at', 'text')
    .addColumn('this_update', 'text')
    .addColumn('next_update', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('revocation_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await schema.alterTable('certificates').addColumn('health_state', 'text').execute();
  await schema.alterTable('certificates').addColumn('health_changed_at', 'text').execute();
  await schema.alterTable('developer_accounts').addColumn('health_state', 'text').execute();
  await schema.alterTable('developer_accounts').addColumn('health_changed_at', 'text').execute();
}
