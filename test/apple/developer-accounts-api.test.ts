// POST/GET/DELETE /v1/developer-accounts against the App Store Connect fake: the key is checked,
// the .p12 must be a current distribution certificate of the team, devices are synced into slot
// counts, secrets are sealed at rest, and every refusal has its catalogue code.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { FakeAppStoreConnect, needsAscSpec, type FakeTeam } from '../support/asc-server.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { accountForm } from '../super-signature/harness.ts';

describe('developer accounts API', needsAscSpec(), () => {
  let asc: FakeAppStoreConnect;
  let team: FakeTeam;
  let server: TestServer;
  let api: Api;

  before(async () => {
    asc = new FakeAppStoreConnect();
    team = asc.addTeam();
    team.addCertificate(testPki().leaf.certificate);
    team.seedDevice('00008030-00000000000000A1');
    team.seedDevice('00008030-00000000000000A2', 'IPHONE', 'DISABLED');
    team.seedDevice('00008030-00000000000000A3', 'IPAD');
    await asc.start();
    server = await startTestServer({ name: 'developer-accounts', env: { SIGNET_ASC_BASE_URL: asc.url }, overrides: { superSignature: { ascOptions: { baseDelayMs: 1, maxRetries: 1 } } } });
    api = new Api(server.url, server.key);
  });
  after(async () => {
    await server?.close();
    await asc?.close();
  });

  it('refuses what App Store Connect or the files say is wrong, each with its code', async () => {
    const pki = testPki();
    const cases: Array<[Record<string, any>, number, string]> = [
      [{ password: 'wrong' }, 422, 'certificate_password_incorrect'],
      [{ p12: { name: 'other.p12', data: pki.p12(pki.ecLeaf, { password: 'secret' }) } }, 422, 'developer_certificate_mismatch'],
      [{ p12: { name: 'old.p12', data: pki.p12(pki.expiredLeaf, { password: 'secret' }) } }, 422, 'developer_certificate_unusable'],
      [{ issuer_id: 'not-a-uuid' }, 400, 'invalid_request'],
      [{ p8: { name: 'rsa.p8', data: Buffer.from(pki.leaf.privateKeyPem) } }, 400, 'invalid_request'],
      [{ key_id: 'WRONGKEY99' }, 422, 'developer_key_rejected'],
    ];
    for (const [overrides, status, code] of cases) {
      const response = await api.form('/v1/developer-accounts', accountForm(team, overrides));
      assert.equal(response.status, status, `${JSON.stringify(Object.keys(overrides))}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error, code);
    }
    team.agreementMissing = true;
    const agreement = await api.form('/v1/developer-accounts', accountForm(team));
    team.agreementMissing = false;
    assert.equal(agreement.body.error, 'developer_agreement_required');
    const missing = await api.form('/v1/developer-accounts', { issuer_id: team.key.issuerId, key_id: team.key.keyId });
    assert.equal(missing.status, 400);
    assert.equal((await api.get('/v1/developer-accounts')).body.data.items.length, 0, 'nothing stored by refused requests');
  });

  it('registers an account with Apple’s devices counted per class, secrets sealed', async () => {
    const created = await api.form('/v1/developer-accounts', accountForm(team));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const account = created.body.data;
    assert.match(account.id, /^dac_/);
    assert.equal(account.health, 'ok');
    assert.equal(account.team_id, testPki().teamId);
    assert.deepEqual(account.slots.iphone, { used: 2, limit: 100, free: 98 }, 'a disabled device still holds its slot');
    assert.deepEqual(account.slots.ipad, { used: 1, limit: 100, free: 99 });
    assert.equal(JSON.stringify(account).includes('PRIVATE KEY'), false);

    const row = await server.service.db.kysely.selectFrom('developer_accounts').selectAll().where('id', '=', account.id).executeTakeFirstOrThrow();
    assert.equal(row.p8_sealed.includes('PRIVATE'), false);
    assert.equal(Buffer.from(row.p8_sealed, 'base64').toString('latin1').includes('BEGIN'), false);
    assert.equal(server.service.db.repos.developerAccounts.secrets(row).p8Pem, team.key.privateKeyPem);

    const duplicate = await api.form('/v1/developer-accounts', accountForm(team));
    assert.equal(duplicate.status, 400);

    assert.equal((await api.get(`/v1/developer-accounts/${account.id}`)).body.data.id, account.id);
    assert.equal((await api.get('/v1/developer-accounts')).body.data.items.length, 1);
  });

  it('is invisible to other accounts, and deletable', async () => {
    const [account] = (await api.get('/v1/developer-accounts')).body.data.items;
    const otherKey = (await server.service.db.repos.apiKeys.create({ accountId: (await server.service.db.repos.accounts.create('other')).id })).key;
    const other = api.as(otherKey);
    assert.equal((await other.get(`/v1/developer-accounts/${account.id}`)).status, 404);
    assert.equal((await other.request('DELETE', `/v1/developer-accounts/${account.id}`)).status, 404);
    assert.equal((await api.request('DELETE', `/v1/developer-accounts/${account.id}`)).status, 200);
    assert.equal((await api.get(`/v1/developer-accounts/${account.id}`)).body.error, 'developer_account_not_found');
  });

  it('super tasks need a usable developer account; APKs cannot be super-signed', async () => {
    const apk = (await import('../support/app-packages.ts')).tinyApk();
    const upload = await api.upload('app.apk', apk);
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    const refused = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'super' });
    assert.equal(refused.body.error, 'cert_type_unsupported');
  });

  it('every request Signet made matched the OpenAPI spec', () => {
    assert.deepEqual(asc.violations, []);
  });
});
