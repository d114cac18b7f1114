// An ad-hoc build's install page tells a visitor whose device Signet knows (from a UDID
// enrollment on a super-signature link, remembered in a signed cookie) and whose UDID its profile
// does not list that the app will not install on that device; a listed device, an unknown
// visitor and a forged cookie see no such notice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { needsAscSpec } from '../support/asc-server.ts';
import { newDevice } from '../support/device.ts';
import { generatedApp } from '../support/ios-app.ts';
import { issueTestIdentity, testPki } from '../support/pki.ts';
import { enrollDevice, IPHONE_UA, startSuperHarness, waitEnrollment, type SuperHarness } from './harness.ts';

describe('ad-hoc install page and known devices', needsAscSpec(), () => {
  let h: SuperHarness;
  before(async () => {
    h = await startSuperHarness('ad-hoc-page');
  });
  after(() => h?.close());

  async function adHocRelease(label: string, devices: string[]): Promise<string> {
    const pki = testPki();
    const identity = issueTestIdentity(label, { issuer: pki.intermediate, commonName: `iPhone Distribution: ${label} (${pki.teamId})`, notBefore: new Date(Date.now() - 86400_000), notAfter: new Date(Date.now() + 400 * 86400_000) });
    const certificate = await h.api.form('/v1/certificates', {
      kind: 'ios_adhoc',
      password: 'pw',
      file: { name: 'a.p12', data: pki.p12(identity, { password: 'pw', includeChain: true }) },
      profile: { name: 'a.mobileprovision', data: pki.mobileprovision({ bundleId: '*', devices, certificate: identity.certificate, name: `${label} ad hoc` }) },
    });
    assert.equal(certificate.status, 200, JSON.stringify(certificate.body));
    const fileKey = (await h.api.upload(`${label}.ipa`, generatedApp(label).bytes)).body.data.file_key;
    const taskId = (await h.api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', certificate_id: certificate.body.data.id })).body.data.task_id;
    for (let i = 0; i < 600; i++) {
      const distribution = await h.api.get(`/v1/tasks/${taskId}/distribution`);
      if (distribution.status === 200) return distribution.body.data.url as string;
      const task = (await h.api.get(`/v1/tasks/${taskId}`)).body.data;
      assert.ok(task.status !== 'failed', JSON.stringify(task.error));
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail('the ad-hoc release did not publish');
  }

  const visit = (url: string, cookie?: string) => fetch(url, { headers: { 'user-agent': IPHONE_UA, ...(cookie ? { cookie } : {}) } }).then((r) => r.text());

  it('warns a known device missing from the profile, and only then', async () => {
    const device = newDevice();
    const enrollment = await enrollDevice(h, device);
    assert.equal((await waitEnrollment(h, enrollment)).state, 'ready');
    const page = await fetch(`${h.server.url}/d/${h.slug}?enrollment=${enrollment}`, { headers: { 'user-agent': IPHONE_UA } });
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith('signet_device='))?.split(';')[0];
    assert.ok(cookie, 'the enrollment makes the device known');
    assert.match(page.headers.getSetCookie().join('\n'), /signet_device=[^;]+; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax/);

    const elsewhere = await adHocRelease('adHocOthers', ['00008030-0000000000000001']);
    const forThisDevice = await adHocRelease('adHocMine', [device.udid]);
    assert.match(await visit(elsewhere, cookie), /id="not-provisioned"/);
    assert.match(await visit(elsewhere, cookie), /will not install/);
    assert.doesNotMatch(await visit(forThisDevice, cookie), /id="not-provisioned"/, 'a listed device');
    assert.doesNotMatch(await visit(forThisDevice, cookie), /id="trust"|VPN &amp; Device Management|VPN & Device Management/, 'no in-house trust step for an ad-hoc build');
    assert.doesNotMatch(await visit(elsewhere), /id="not-provisioned"/, 'an unknown visitor');
    const forged = cookie.replace(/\.[^.]+$/, '.' + 'A'.repeat(43));
    assert.doesNotMatch(await visit(elsewhere, forged), /id="not-provisioned"/, 'a forged cookie');
    assert.doesNotMatch(await visit(`${h.server.url}/d/${h.slug}`, cookie), /id="not-provisioned"/, 'a super link provisions every device itself');
  });
});
