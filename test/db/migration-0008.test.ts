// Migration 0008 on a database that already holds iOS enterprise certificates with their one
// profile (uploaded before profiles per certificate existed): the profile moves into
// certificate_profiles with its sealed bytes untouched, still opens, is listed with the UUID and
// entitlements read back from those bytes, and signs as before. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { wrap } from '../../src/db/database.ts';
import type { DialectName } from '../../src/db/dialect.ts';
import { migrateToLatest } from '../../src/db/migrator.ts';
import { SecretBox } from '../../src/db/secret-box.ts';
import { productionProfileReader } from '../../src/main/signers.ts';
import { certificateView } from '../../src/http/views.ts';
import { CertificateService } from '../../src/services/certificates.ts';
import { createTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { testPki } from '../support/pki.ts';

const BEFORE_0008 = ['0001-initial', '0002-distributions', '0003-super-signature'];

async function migrateUpTo(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const migrations = Object.fromEntries(
    await Promise.all(
      BEFORE_0008.map(async (name) => {
        const module = (await import(`../../src/db/migrations/${name}.ts`)) as { up(db: Kysely<any>, dialect: DialectName): Promise<void> };
        return [name, { up: (k: Kysely<any>) => module.up(k, dialect) }] as const;
      }),
    ),
  );
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();
  if (error) throw error;
}

function describeOn(name: DialectName, open: () => Promise<{ kysely: Kysely<any>; close(): Promise<void> }>): void {
  describe(`migration 0008 on ${name}`, () => {
    it('moves each certificate’s profile into certificate_profiles, where it still opens and signs', async () => {
      const { kysely, close } = await open();
      try {
        await migrateUpTo(kysely, name);
        const box = new SecretBox(Buffer.alloc(32, 7));
        const pki = testPki();
        const profile = pki.mobileprovision({ bundleId: 'com.example.legacy', apsEnvironment: 'production' });
        const now = new Date().toISOString();
        await kysely.insertInto('accounts').values({ id: 'acc_legacy', name: 'legacy', webhook_secret_sealed: box.seal('whsec', 'accounts.webhook_secret:acc_legacy'), created_at: now }).execute();
        await kysely
          .insertInto('certificates')
          .values({
            id: 'crt_legacy',
            account_id: 'acc_legacy',
            kind: 'ios_enterprise',
            name: 'Legacy',
            material_sealed: box.seal(Buffer.from('P12'), 'certificates.material_sealed:crt_legacy'),
            certificate_sealed: null,
            password_sealed: box.seal('pw', 'certificates.password_sealed:crt_legacy'),
            key_password_sealed: null,
            key_alias: null,
            profile_sealed: box.seal(profile, 'certificates.profile_sealed:crt_legacy'),
            subject: 'CN=iPhone Distribution',
            team_id: pki.teamId,
            fingerprint: 'ab'.repeat(32),
            not_before: null,
            not_after: null,
            profile_name: 'Legacy profile',
            profile_app_id: `${pki.teamId}.com.example.legacy`,
            profile_type: 'enterprise',
            profile_expires_at: '2040-01-01T00:00:00.000Z',
            created_at: now,
          })
          .execute();

        await migrateToLatest(kysely, name);
        const db = wrap(kysely, name, box);
        const certificate = (await db.repos.certificates.find('acc_legacy', 'crt_legacy'))!;
        assert.equal(certificate.profile_sealed, null, 'the certificate row no longer holds the profile');
        const [moved] = await db.repos.certificateProfiles.list('acc_legacy', 'crt_legacy');
        assert.ok(moved);
        assert.equal(moved.sealed_as, 'certificate');
        assert.equal(moved.app_id, `${pki.teamId}.com.example.legacy`);
        assert.equal(moved.uuid, null, 'read back from the sealed bytes on first use');
        assert.ok(db.repos.certificateProfiles.open(moved).equals(profile));

        const service = new CertificateService({ db, loadIdentity: async () => ({ certificate: Buffer.alloc(0) }), readProfile: productionProfileReader() });
        const view = certificateView(await service.get({ accountId: 'acc_legacy' } as never, 'crt_legacy'));
        assert.equal(view.profiles.length, 1);
        assert.match(view.profiles[0]!.uuid!, /^[0-9A-F-]{36}$/);
        assert.equal(view.profiles[0]!.entitlements?.['aps-environment'], 'production');
        assert.deepEqual(view.profile, { name: 'Legacy profile', app_id: `${pki.teamId}.com.example.legacy`, type: 'enterprise', expires_at: '2040-01-01T00:00:00.000Z' });
        const [filled] = await db.repos.certificateProfiles.list('acc_legacy', 'crt_legacy');
        assert.equal(filled!.uuid, view.profiles[0]!.uuid, 'stored once read');

        const credential = db.repos.certificates.credential(certificate, [{ id: filled!.id, bytes: db.repos.certificateProfiles.open(filled!) }]);
        assert.deepEqual(credential, { kind: 'ios_enterprise', p12: Buffer.from('P12'), password: 'pw', profiles: [{ id: filled!.id, bytes: profile }] });
        const columns = (await kysely.introspection.getTables()).find((t) => t.name === 'tasks')!.columns.map((c) => c.name);
        assert.ok(columns.includes('bundles_json') && columns.includes('warnings_json'));
      } finally {
        await close();
      }
    });
  });
}

let dir = '';
describeOn('sqlite', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'signet-migration-'));
  const kysely = new Kysely<any>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path.join(dir, 'db.sqlite')) }) });
  return { kysely, close: () => kysely.destroy() };
});

let postgres: TestPostgres | undefined;
describeOn('postgres', async () => {
  postgres = await createTestPostgres();
  const pool = new pg.Pool({ connectionString: postgres.url });
  // As the production pool (src/db/database.ts): a connection dropping while idle or closing must
  // not raise an uncaught 'error' in the test process.
  pool.on('error', () => undefined);
  const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, close: () => kysely.destroy() };
});

after(async () => {
  await postgres?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});
