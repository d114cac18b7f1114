// Super signature rotation: a developer account's distribution certificate is replaced
// (PUT /v1/developer-accounts/{id}/certificate); every profile made with the old one is retired
// (deleted at Apple), and the next device request gets new profiles naming the new certificate
// and a build signed with it, which Signet's verifier accepts; a device whose build was signed with
// the old one gets a new build on its next request. Refusals keep the old identity.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BufferSource } from '../../src/signing/data-source.ts';
import { allProblems, verifyIpa } from '../../src/signing/ios/verify-ipa/index.ts';
import { needsAscSpec } from '../support/asc-server.ts';
import { newDevice } from '../support/device.ts';
import { issueTestIdentity, testPki } from '../support/pki.ts';
import { deviceBuild, enrollDevice, startSuperHarness, waitEnrollment, type SuperHarness } from './harness.ts';

describe('developer account certificate rotation', needsAscSpec(), () => {
  let h: SuperHarness;
  before(async () => {
    h = await startSuperHarness('super-rotation');
  });
  after(() => h?.close());

  it('retires the old profiles and signs the next device build with the new certificate', async () => {
    const pki = testPki();
    const first = await enrollDevice(h, newDevice());
    const firstStatus = await waitEnrollment(h, first);
    assert.equal(firstStatus.state, 'ready');
    const firstBuild = firstStatus.build.id;
    const before = await verifyIpa(new BufferSource(await deviceBuild(h, first)));
    assert.deepEqual(allProblems(before), []);
    const oldProfiles = h.team.profiles.map((p) => p.id);
    assert.ok(oldProfiles.length > 0);

    const successor = issueTestIdentity('superSuccessor', { issuer: pki.intermediate, commonName: `iPhone Distribution: Super Successor (${pki.teamId})`, notBefore: new Date(Date.now() - 86400_000), notAfter: new Date(Date.now() + 800 * 86400_000) });
    const form = (identity = successor) => ({ p12: { name: 'new.p12', data: pki.p12(identity, { password: 'pw', includeChain: true }) }, password: 'pw' });
    const url = `/v1/developer-accounts/${h.developerAccount.id}/certificate`;
    const put = (fields: Record<string, string | { name: string; data: Buffer }>) => {
      const body = new FormData();
      for (const [k, v] of Object.entries(fields)) typeof v === 'string' ? body.append(k, v) : body.append(k, new Blob([new Uint8Array(v.data)]), v.name);
      return h.api.request('PUT', url, { body });
    };

    // Not (yet) a distribution certificate of the team: refused, nothing changes.
    const refused = await put(form());
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.equal(refused.body.error, 'developer_certificate_mismatch');
    assert.deepEqual(h.team.profiles.map((p) => p.id), oldProfiles);

    h.team.addCertificate(successor.certificate);
    const replaced = await put(form());
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.match(replaced.body.data.certificate.subject, /Super Successor/);
    assert.equal(replaced.body.data.usable, true);
    assert.ok(oldProfiles.every((id) => !h.team.profiles.some((p) => p.id === id)), 'the old profiles were deleted at Apple');

    // The next request (a device enrolling) gets a new profile and a build with the new identity.
    const next = await enrollDevice(h, newDevice());
    const status = await waitEnrollment(h, next);
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    const newest = h.team.profiles.at(-1)!;
    const successorId = h.team.certificates.find((c) => c.der.equals(successor.certificate))!.id;
    assert.deepEqual(newest.certificateIds, [successorId], 'the new profile names the new certificate');
    const report = await verifyIpa(new BufferSource(await deviceBuild(h, next)));
    assert.deepEqual(allProblems(report), [], 'Signet’s verifier');
    assert.match(String(report.signer), /Super Successor/);

    // The first device's build was signed with the old certificate: its next request re-makes it.
    const page = await fetch(`${h.server.url}/d/${h.slug}/enrollments/${first}`);
    assert.equal(page.status, 200);
    const remade = await waitEnrollment(h, first);
    assert.equal(remade.state, 'ready', JSON.stringify(remade.error));
    assert.notEqual(remade.build.id, firstBuild, 'a new build');
    const again = await verifyIpa(new BufferSource(await deviceBuild(h, first)));
    assert.deepEqual(allProblems(again), []);
    assert.match(String(again.signer), /Super Successor/);
    assert.match(String(before.signer), /Signet Test Inc/, 'the first build was signed with the old certificate');
  });
});
