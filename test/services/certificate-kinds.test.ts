// Certificate kinds cover the profile types Signet signs with: in-house under ios_enterprise,
// ad-hoc under ios_adhoc, development under ios_development; a profile of another type is refused
// with profile_kind_mismatch (the README's table). Named explicitly, an ad-hoc certificate signs an
// iOS task; by default only in-house ones are chosen. Migration 0013 moves older uploads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { tinyIpa } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const UDID = '00008030-000A1B2C3D4E5F60';

describe('iOS certificate kinds', () => {
  let server: TestServer;
  let api: Api;
  before(async () => {
    server = await startTestServer({ name: 'kinds', overrides: { signers: [] } });
    api = new Api(server.url, server.key);
  });
  after(async () => {
    await server?.close();
  });

  const pki = testPki();
  const upload = (kind: string, profile: Buffer, identity = pki.leaf) =>
    api.form('/v1/certificates', { kind, password: 'pw', file: { name: 'c.p12', data: pki.p12(identity, { password: 'pw' }) }, profile: { name: 'p.mobileprovision', data: profile } });
  const adHoc = () => pki.mobileprovision({ bundleId: '*', devices: [UDID], name: 'Ad hoc' });
  const development = () => pki.mobileprovision({ bundleId: '*', devices: [UDID], getTaskAllow: true, name: 'Development' });
  const inHouse = () => pki.mobileprovision({ bundleId: '*', name: 'In house' });

  it('accepts each profile type under its kind and refuses it under another', async () => {
    for (const [kind, profile, type] of [['ios_enterprise', inHouse(), 'enterprise'], ['ios_adhoc', adHoc(), 'ad-hoc'], ['ios_development', development(), 'development']] as const) {
      const response = await upload(kind, profile);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.data.kind, kind);
      assert.equal(response.body.data.profiles[0].type, type);
    }
    const wrong = await upload('ios_enterprise', adHoc());
    assert.equal(wrong.status, 422);
    assert.equal(wrong.body.error, 'profile_kind_mismatch');
    assert.match(wrong.body.message, /Upload it as kind ios_adhoc/);
    assert.equal((await upload('ios_adhoc', inHouse())).body.error, 'profile_kind_mismatch');
    const unknownKind = await api.form('/v1/certificates', { kind: 'ios_appstore', password: 'pw', file: { name: 'c.p12', data: pki.p12(pki.leaf, { password: 'pw' }) } });
    assert.equal(unknownKind.status, 400);
  });

  it('an ad-hoc certificate signs when named; the default choice stays in-house', async () => {
    const adhocId = (await api.get('/v1/certificates')).body.data.items.find((c: { kind: string }) => c.kind === 'ios_adhoc').id;
    const enterpriseId = (await api.get('/v1/certificates')).body.data.items.find((c: { kind: string }) => c.kind === 'ios_enterprise').id;
    const fileKey = (await api.upload('x.ipa', tinyIpa())).body.data.file_key;
    const named = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', certificate_id: adhocId });
    assert.equal(named.status, 200, JSON.stringify(named.body));
    assert.equal((await api.get(`/v1/tasks/${named.body.data.task_id}`)).body.data.certificate_id, adhocId);
    const byDefault = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' });
    assert.equal((await api.get(`/v1/tasks/${byDefault.body.data.task_id}`)).body.data.certificate_id, enterpriseId);
  });
});

describe('migration 0013', () => {
  it('gives older ios_enterprise certificates holding only ad-hoc or development profiles their kind', async () => {
    const server = await startTestServer({ name: 'kinds-migration', overrides: { signers: [] } });
    try {
      const { db } = server.service;
      const accountId = (await db.repos.accounts.findByName('default'))!.id;
      const pki = testPki();
      const make = async (types: Array<string | null>) => {
        const row = await db.repos.certificates.create({ accountId, kind: 'ios_enterprise', name: null, material: Buffer.from('p12'), certificate: null, password: null, keyPassword: null, keyAlias: null, metadata: { subject: 'CN=x', teamId: pki.teamId, fingerprint: `${Math.random()}`, notBefore: new Date(), notAfter: new Date(Date.now() + 86400_000) } });
        for (const [i, type] of types.entries()) {
          await db.repos.certificateProfiles.add({ accountId, certificateId: row.id, bytes: Buffer.from(`profile ${row.id} ${i}`), metadata: { name: null, uuid: `${row.id}-${i}`, appId: null, type, teamId: pki.teamId, expiresAt: null, entitlements: {} } });
        }
        return row.id;
      };
      const adhoc = await make(['ad-hoc', 'ad-hoc']);
      const development = await make(['development']);
      const inHouse = await make(['enterprise']);
      const mixed = await make(['ad-hoc', 'enterprise']);
      const none = await make([]);
      const { up } = await import('../../src/db/migrations/0013-ios-certificate-kinds.ts');
      await up(db.kysely, db.dialect);
      const kind = async (id: string) => (await db.repos.certificates.find(accountId, id))!.kind;
      assert.deepEqual(await Promise.all([adhoc, development, inHouse, mixed, none].map(kind)), ['ios_adhoc', 'ios_development', 'ios_enterprise', 'ios_enterprise', 'ios_enterprise']);
    } finally {
      await server.close();
    }
  });
});
