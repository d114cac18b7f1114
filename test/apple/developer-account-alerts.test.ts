// developer_account.unhealthy: a developer account whose distribution certificate its OCSP
// responder revokes, or whose key Apple rejects, is announced to account webhooks once per change
// of state; its certificate_health shows the revocation.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api } from '../support/api-client.ts';
import { FakeAppStoreConnect, needsAscSpec, type FakeTeam } from '../support/asc-server.ts';
import { startOcspResponder, type TestOcspResponder } from '../support/ocsp-responder.ts';
import { issueTestIdentity, testPki, type TestIdentity } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { accountForm } from '../super-signature/harness.ts';

describe('developer_account.unhealthy', needsAscSpec(), () => {
  let asc: FakeAppStoreConnect;
  let team: FakeTeam;
  let server: TestServer;
  let api: Api;
  let responder: TestOcspResponder;
  let receiver: http.Server;
  let identity: TestIdentity;
  const received: Array<{ event: string; data: any }> = [];

  before(async () => {
    responder = await startOcspResponder();
    const pki = testPki();
    identity = issueTestIdentity('devAccountLeaf', { issuer: pki.intermediate, commonName: `iPhone Distribution: Signet Test Inc (${pki.teamId})`, notBefore: new Date(Date.now() - 86400_000), notAfter: new Date(Date.now() + 400 * 86400_000), ocspUrl: responder.url });
    await responder.setIndex([{ identity }]);
    asc = new FakeAppStoreConnect();
    team = asc.addTeam();
    team.addCertificate(identity.certificate);
    await asc.start();
    receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    server = await startTestServer({
      name: 'developer-alerts',
      env: { SIGNET_ASC_BASE_URL: asc.url, SIGNET_OUTBOUND_ALLOW: '127.0.0.1' },
      overrides: { superSignature: { ascOptions: { baseDelayMs: 1, maxRetries: 1 } } },
    });
    api = new Api(server.url, server.key);
    const hook = await api.post('/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, events: ['developer_account.unhealthy'] });
    assert.equal(hook.status, 200, JSON.stringify(hook.body));
  });
  after(async () => {
    await responder?.close();
    await server?.close();
    await asc?.close();
    receiver?.close();
  });

  it('is sent once when its responder revokes the certificate; the account then takes no new devices', async () => {
    const pki = testPki();
    const created = await api.form('/v1/developer-accounts', accountForm(team, { p12: { name: 'd.p12', data: pki.p12(identity, { password: 'secret', includeChain: true }) } }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data.id;
    assert.equal(created.body.data.certificate_health.state, 'ok');
    assert.equal(created.body.data.certificate_health.revocation.status, 'good');

    await responder.setIndex([{ identity, revokedAt: new Date(Date.now() - 60_000) }]);
    const row = (await server.service.db.repos.developerAccounts.findById(id))!;
    await server.service.lifecycle!.checkDeveloperAccount(row, { force: true });
    await server.service.lifecycle!.checkDeveloperAccount(row, { force: true });
    const deadline = Date.now() + 30_000;
    while (received.length === 0 && Date.now() < deadline) await sleep(100);
    await sleep(300);
    assert.equal(received.length, 1);
    assert.equal(received[0]!.event, 'developer_account.unhealthy');
    assert.equal(received[0]!.data.state, 'revoked');
    assert.equal(received[0]!.data.developer_account.id, id);
    const view = (await api.get(`/v1/developer-accounts/${id}`)).body.data;
    assert.equal(view.certificate_health.state, 'revoked');
    assert.equal(view.usable, false, 'a revoked account takes no new devices');
    assert.equal((await server.service.db.repos.developerAccounts.findById(id))!.health_state, 'revoked');
  });
});
