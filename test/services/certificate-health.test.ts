// Certificate health end to end: certificates issued for the test (dates chosen per case) and an
// OCSP responder run by `openssl ocsp` answering good, revoked and unknown; a responder that is
// not there or never answers gives `unknown`, never `revoked`; uploads refuse what cannot work
// and warn about what soon will not; the default certificate is never an expired or revoked one.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { tinyIpa } from '../support/app-packages.ts';
import { freePort, startOcspResponder, type TestOcspResponder } from '../support/ocsp-responder.ts';
import { issueTestIdentity, testPki, type TestIdentity } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const day = 86400_000;
let labels = 0;

describe('certificate health', () => {
  let responder: TestOcspResponder;
  let server: TestServer;
  let api: Api;
  let silent: net.Server;
  let silentUrl: string;
  let deadUrl: string;
  const listed: Array<{ identity: TestIdentity; revokedAt?: Date }> = [];
  const held = new Set<net.Socket>();

  before(async () => {
    responder = await startOcspResponder();
    // A responder that accepts connections and never answers, and a port nothing listens on.
    silent = net.createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    deadUrl = `http://127.0.0.1:${await freePort()}`;
    server = await startTestServer({ name: 'health', env: { SIGNET_OUTBOUND_ALLOW: '127.0.0.1', SIGNET_OCSP_TIMEOUT: '1' } });
    api = new Api(server.url, server.key);
  });
  after(async () => {
    await responder?.close();
    await server?.close();
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  function issue(options: { validForMs?: number; ocspUrl?: string | null } = {}): TestIdentity {
    const label = `health${++labels}`;
    return issueTestIdentity(label, {
      issuer: testPki().intermediate,
      commonName: `iPhone Distribution: Health ${labels}`,
      notBefore: new Date(Date.now() - day),
      notAfter: new Date(Date.now() + (options.validForMs ?? 400 * day)),
      ...(options.ocspUrl === null ? {} : { ocspUrl: options.ocspUrl ?? responder.url }),
    });
  }

  /** Puts identities in the responder's index (good unless revokedAt). */
  async function list(...entries: Array<{ identity: TestIdentity; revokedAt?: Date }>): Promise<void> {
    listed.push(...entries);
    await responder.setIndex(listed);
  }

  function upload(identity: TestIdentity, profileExpiresAt = new Date(Date.now() + 300 * day)) {
    const pki = testPki();
    return api.form('/v1/certificates', {
      kind: 'ios_enterprise',
      password: 'pw',
      name: identity.label,
      // With the chain, as `openssl pkcs12 -certfile` exports keep it: the issuer is known.
      file: { name: `${identity.label}.p12`, data: pki.p12(identity, { password: 'pw', includeChain: true }) },
      profile: { name: `${identity.label}.mobileprovision`, data: pki.mobileprovision({ bundleId: '*', certificate: identity.certificate, expiresAt: profileExpiresAt, name: `${identity.label} profile` }) },
    });
  }

  async function recheck(id: string, force = false) {
    const row = await server.service.db.repos.certificates.find(await accountId(), id);
    assert.ok(row);
    await server.service.lifecycle!.checkCertificate(row, { force });
    return (await api.get(`/v1/certificates/${id}`)).body.data;
  }

  async function accountId(): Promise<string> {
    return (await server.service.db.repos.accounts.findByName('default'))!.id;
  }

  it('ok: a current certificate its responder calls good, the answer cached until nextUpdate', async () => {
    const identity = issue();
    await list({ identity });
    const response = await upload(identity);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const health = response.body.data.health;
    assert.equal(health.state, 'ok', JSON.stringify(health));
    assert.equal(health.revocation.status, 'good');
    assert.equal(health.revocation.responder, responder.url);
    assert.ok(Date.parse(health.revocation.next_update) > Date.now());
    assert.equal(response.body.data.warnings, undefined);
    // Shown the same in the listing and by id.
    const listedView = (await api.get('/v1/certificates')).body.data.items.find((c: { id: string }) => c.id === response.body.data.id);
    assert.deepEqual(listedView.health, health);
  });

  it('revoked: refused at upload; revoked after upload shows once the cached answer is renewed', async () => {
    const early = issue();
    await list({ identity: early, revokedAt: new Date(Date.now() - day) });
    const refused = await upload(early);
    assert.equal(refused.status, 422);
    assert.equal(refused.body.error, 'certificate_revoked');

    const later = issue();
    await list({ identity: later });
    const created = (await upload(later)).body.data;
    assert.equal(created.health.state, 'ok');
    const revokedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    listed.find((e) => e.identity === later)!.revokedAt = revokedAt;
    await responder.setIndex(listed);
    // The good answer is still valid (nextUpdate an hour away): the periodic check reuses it.
    assert.equal((await recheck(created.id)).health.state, 'ok');
    const renewed = await recheck(created.id, true);
    assert.equal(renewed.health.state, 'revoked');
    assert.equal(renewed.health.revocation.revoked_at, revokedAt.toISOString());
    assert.equal(renewed.health.revocation.revocation_reason, 'keyCompromise');
    assert.match(renewed.health.reason, /revoked/);
  });

  it('expiring: the certificate or a profile expires within 30 days; a profile within 7 days warns at upload', async () => {
    const soon = issue({ validForMs: 10 * day });
    await list({ identity: soon });
    const certSoon = (await upload(soon)).body.data;
    assert.equal(certSoon.health.state, 'expiring');
    assert.match(certSoon.health.reason, /certificate expires/);
    assert.equal(certSoon.health.expires_at, certSoon.not_after);

    const profileSoon = issue();
    await list({ identity: profileSoon });
    const response = await upload(profileSoon, new Date(Date.now() + 3 * day));
    assert.equal(response.status, 200);
    assert.equal(response.body.data.health.state, 'expiring');
    assert.match(response.body.data.health.reason, /provisioning profile/);
    assert.equal(response.body.data.warnings.length, 1);
    assert.equal(response.body.data.warnings[0].code, 'profile_expiring');
  });

  it('expired and profile_expired: refused at upload, and shown when they expire later', async () => {
    const pki = testPki();
    const expired = await api.form('/v1/certificates', {
      kind: 'ios_enterprise',
      password: 'pw',
      file: { name: 'old.p12', data: pki.p12(pki.expiredLeaf, { password: 'pw' }) },
      profile: { name: 'p.mobileprovision', data: pki.mobileprovision({ bundleId: '*', certificate: pki.expiredLeaf.certificate }) },
    });
    assert.equal(expired.status, 422);
    assert.equal(expired.body.error, 'certificate_expired');

    const identity = issue();
    await list({ identity });
    const expiredProfile = await upload(identity, new Date(Date.now() - day));
    assert.equal(expiredProfile.status, 422);
    assert.equal(expiredProfile.body.error, 'profile_expired');

    // Both lapse a few seconds after upload: the next check shows it.
    const brief = issue({ validForMs: 3000 });
    const briefProfile = issue();
    await list({ identity: brief }, { identity: briefProfile });
    const a = (await upload(brief)).body.data;
    const b = (await upload(briefProfile, new Date(Date.now() + 3000))).body.data;
    assert.equal(a.health.state, 'expiring');
    await new Promise((r) => setTimeout(r, 3500));
    assert.equal((await recheck(a.id)).health.state, 'expired');
    const lapsed = await recheck(b.id);
    assert.equal(lapsed.health.state, 'profile_expired');
    assert.match(lapsed.health.reason, /expired on/);
  });

  it('unknown: the responder does not know the certificate, cannot be reached, or never answers', async () => {
    const unlisted = issue();
    const created = (await upload(unlisted)).body.data;
    assert.equal(created.health.state, 'unknown');
    assert.equal(created.health.revocation.status, 'unknown');
    assert.match(created.health.reason, /does not know/);

    const unreachable = (await upload(issue({ ocspUrl: deadUrl }))).body.data;
    assert.equal(unreachable.health.state, 'unknown');
    assert.equal(unreachable.health.revocation.status, 'error');
    assert.match(unreachable.health.reason, /unreachable \(ECONNREFUSED\)/);

    const started = Date.now();
    const silentResponse = await upload(issue({ ocspUrl: silentUrl }));
    assert.equal(silentResponse.status, 200);
    assert.ok(Date.now() - started < 10_000, 'the upload waits for the OCSP timeout (1 s), no longer');
    assert.equal(silentResponse.body.data.health.state, 'unknown');
    assert.match(silentResponse.body.data.health.reason, /timed out/);
    // Never revoked, however often it is asked.
    assert.equal((await recheck(silentResponse.body.data.id, true)).health.state, 'unknown');
  });

  it('never chooses an expired or revoked certificate by default, and refuses one named explicitly', async () => {
    const older = issue();
    const newer = issue();
    const lapsing = issue({ validForMs: 2500 });
    await list({ identity: older }, { identity: newer }, { identity: lapsing });
    const olderCert = (await upload(older)).body.data;
    const newerCert = (await upload(newer)).body.data;
    const fileKey = (await api.upload('x.ipa', tinyIpa())).body.data.file_key;
    const chosen = async () => {
      const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return (await api.get(`/v1/tasks/${created.body.data.task_id}`)).body.data.certificate_id;
    };
    assert.equal(await chosen(), newerCert.id, 'the newest usable one');

    listed.find((e) => e.identity === newer)!.revokedAt = new Date(Date.now() - 60_000);
    await responder.setIndex(listed);
    assert.equal((await recheck(newerCert.id, true)).health.state, 'revoked');
    const lapsingCert = (await upload(lapsing)).body.data;
    assert.equal(await chosen(), lapsingCert.id);
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await chosen(), olderCert.id, 'skips the expired and the revoked ones');

    const explicitRevoked = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', certificate_id: newerCert.id });
    assert.equal(explicitRevoked.status, 422);
    assert.equal(explicitRevoked.body.error, 'certificate_revoked');
    const explicitExpired = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', certificate_id: lapsingCert.id });
    assert.equal(explicitExpired.status, 422);
    assert.equal(explicitExpired.body.error, 'certificate_expired');
  });

  it('a certificate without an OCSP responder (Android keys, test leaves) is not asked and stays ok', async () => {
    const response = await upload(issue({ ocspUrl: null }));
    assert.equal(response.body.data.health.state, 'ok');
    assert.equal(response.body.data.health.revocation.status, 'not_applicable');
  });
});
