// What testers and account owners see in the cases that matter: two devices at once on one
// account, the same device twice, no free slot, a revoked API key, and a tampered device answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { needsAscSpec } from '../support/asc-server.ts';
import { deviceResponse, newDevice, tamper } from '../support/device.ts';
import { downloadRequestProfile, enrollDevice, page, postDeviceAnswer, startSuperHarness, waitEnrollment, type SuperHarness } from './harness.ts';

describe('super signature scenarios', needsAscSpec(), () => {
  let h: SuperHarness;
  before(async () => {
    h = await startSuperHarness('scenarios');
  });
  after(() => h?.close());

  it('two devices at once on one account: each registered once, each gets a build with its UDID', async () => {
    const [a, b] = [newDevice(), newDevice('iPhone14,5')];
    h.asc.registrationDelayMs = 100; // widen the window in which the two flows overlap
    const [ea, eb] = await Promise.all([enrollDevice(h, a), enrollDevice(h, b)]);
    const [sa, sb] = await Promise.all([waitEnrollment(h, ea), waitEnrollment(h, eb)]);
    h.asc.registrationDelayMs = 0;
    assert.equal(sa.state, 'ready', JSON.stringify(sa.error));
    assert.equal(sb.state, 'ready', JSON.stringify(sb.error));
    for (const device of [a, b]) assert.equal(h.team.devices.filter((d) => d.udid === device.udid).length, 1);
    const account = (await h.api.get(`/v1/developer-accounts/${h.developerAccount.id}`)).body.data;
    assert.equal(account.slots.iphone.used, 2);
    // Profiles are replaced, never edited: exactly one is left at Apple, and it holds both devices.
    assert.equal(h.team.profiles.length, 1);
    const ids = h.team.devices.filter((d) => d.udid === a.udid || d.udid === b.udid).map((d) => d.id);
    for (const id of ids) assert.ok(h.team.profiles[0]!.deviceIds.includes(id));
    assert.deepEqual(h.asc.violations, []);
  });

  it('the same device twice: no new registration, no new profile, the same build', async () => {
    const device = newDevice();
    const first = await waitEnrollment(h, await enrollDevice(h, device));
    assert.equal(first.state, 'ready', JSON.stringify(first.error));
    const posts = h.asc.requests.filter((r) => r.method === 'POST').length;
    const second = await waitEnrollment(h, await enrollDevice(h, device));
    assert.equal(second.state, 'ready', JSON.stringify(second.error));
    assert.equal(second.build.id, first.build.id);
    assert.equal(h.asc.requests.filter((r) => r.method === 'POST').length, posts, 'nothing created at Apple');
    assert.equal(h.team.devices.filter((d) => d.udid === device.udid).length, 1);
  });

  it('the same device arriving twice at once is registered once and gets one build', async () => {
    const device = newDevice();
    h.asc.registrationDelayMs = 100;
    const [e1, e2] = await Promise.all([enrollDevice(h, device), enrollDevice(h, device)]);
    const [s1, s2] = await Promise.all([waitEnrollment(h, e1), waitEnrollment(h, e2)]);
    h.asc.registrationDelayMs = 0;
    assert.equal(s1.state, 'ready', JSON.stringify(s1.error));
    assert.equal(s2.state, 'ready', JSON.stringify(s2.error));
    assert.equal(s1.build.id, s2.build.id);
    assert.equal(h.team.devices.filter((d) => d.udid === device.udid).length, 1);
    assert.equal(h.asc.requests.filter((r) => r.method === 'POST' && r.path === '/v1/devices' && (r.body as any).data.attributes.udid === device.udid).length, 1);
  });

  it('a replayed device answer leads back to the same enrollment; another device cannot reuse the challenge', async () => {
    const device = newDevice();
    const { callback, challenge } = await downloadRequestProfile(h);
    const body = deviceResponse(device, challenge);
    const once = await postDeviceAnswer(h, callback, body);
    const twice = await postDeviceAnswer(h, callback, body);
    assert.equal(once.status, 301);
    assert.equal(twice.status, 301);
    assert.equal(twice.headers.get('location'), once.headers.get('location'));
    const other = await postDeviceAnswer(h, callback, deviceResponse(newDevice(), challenge));
    assert.equal(other.status, 410);
    await waitEnrollment(h, new URL(once.headers.get('location')!).searchParams.get('enrollment')!);
  });

  it('a profile that changes entitlements gets a whole-app re-sign instead of the incremental one', async () => {
    h.team.profileOptions = { getTaskAllow: true };
    try {
      const status = await waitEnrollment(h, await enrollDevice(h, newDevice()));
      assert.equal(status.state, 'ready', JSON.stringify(status.error));
      const build = await h.server.service.db.repos.superSignature.findBuild(status.build.id);
      assert.equal(build?.shared_blob_key, null, 'a whole .ipa, not shared ++ part');
    } finally {
      h.team.profileOptions = {};
    }
  });

  it('a device disabled in the developer portal since the last sync: resync, and the next profile leaves it out', async () => {
    const disabled = h.team.devices.find((d) => d.status === 'ENABLED')!;
    disabled.status = 'DISABLED';
    try {
      const status = await waitEnrollment(h, await enrollDevice(h, newDevice()));
      assert.equal(status.state, 'ready', JSON.stringify(status.error));
      const newest = h.team.profiles.at(-1)!;
      assert.ok(!newest.deviceIds.includes(disabled.id));
    } finally {
      disabled.status = 'ENABLED';
    }
  });

  it('a password-protected super link asks for the password before handing out the registration profile', async () => {
    const distribution = (await h.api.get(`/v1/tasks/${h.task.task_id}/distribution`)).body.data;
    const set = await h.api.request('PATCH', `/v1/distributions/${distribution.id}`, { json: { password: 'open sesame' } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    try {
      const refused = await fetch(`${h.server.url}/d/${h.slug}/udid.mobileconfig`);
      assert.equal(refused.status, 401, 'password_required');
      const unlock = await fetch(`${h.server.url}/d/${h.slug}`, { method: 'POST', body: new URLSearchParams({ password: 'open sesame' }), redirect: 'manual' });
      const cookie = unlock.headers.get('set-cookie')!.split(';')[0]!;
      const allowed = await fetch(`${h.server.url}/d/${h.slug}/udid.mobileconfig`, { headers: { cookie } });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers.get('content-type'), 'application/x-apple-aspen-config');
    } finally {
      await h.api.request('PATCH', `/v1/distributions/${distribution.id}`, { json: { password: null } });
    }
  });

  it('a tampered device answer is refused (400) and nothing reaches Apple', async () => {
    const device = newDevice();
    const { callback, challenge } = await downloadRequestProfile(h);
    const requests = h.asc.requests.length;
    const answer = await postDeviceAnswer(h, callback, tamper(deviceResponse(device, challenge), device));
    assert.equal(answer.status, 400);
    assert.match(await answer.text(), /Device registration failed/);
    const wrongChallenge = await postDeviceAnswer(h, callback, deviceResponse(device, 'not-the-challenge'));
    assert.equal(wrongChallenge.status, 410);
    assert.equal(h.asc.requests.length, requests);
    assert.ok(!h.team.devices.some((d) => d.udid === device.udid));
  });

  it('no free slot left: the page says so, and the reserved slot is given back', async () => {
    h.team.deviceLimit = h.team.devicesOfClass('IPHONE'); // devices added in the portal used the rest
    try {
      const device = newDevice();
      const enrollment = await enrollDevice(h, device);
      const status = await waitEnrollment(h, enrollment);
      assert.equal(status.state, 'failed');
      assert.equal(status.error.code, 'device_slots_exhausted');
      assert.match(await page(h, `?enrollment=${enrollment}`), /No device slot left/);
      const account = (await h.api.get(`/v1/developer-accounts/${h.developerAccount.id}`)).body.data;
      assert.equal(account.slots.iphone.used, h.team.devicesOfClass('IPHONE'), 'slot counts resynced from Apple, reservation released');
    } finally {
      h.team.deviceLimit = 100;
    }
  });

  it('Apple reviewing the account (PROCESSING): the page says to come back later; INELIGIBLE devices are told so', async () => {
    h.team.reviewMode = true;
    try {
      const device = newDevice();
      const enrollment = await enrollDevice(h, device);
      const status = await waitEnrollment(h, enrollment);
      assert.equal(status.error.code, 'device_pending_review');
      assert.match(await page(h, `?enrollment=${enrollment}`), /Apple is reviewing this device/);
      h.team.settle('INELIGIBLE');
      const again = await waitEnrollment(h, await enrollDevice(h, device));
      // The slot is Apple's answer now: still PROCESSING in Signet's copy until a check resyncs it.
      assert.ok(['device_pending_review', 'device_ineligible'].includes(again.error.code), again.error.code);
      await h.api.post(`/v1/developer-accounts/${h.developerAccount.id}/check`);
      const third = await waitEnrollment(h, await enrollDevice(h, device));
      assert.equal(third.error.code, 'device_ineligible');
      assert.match(await page(h, `?enrollment=${third.id}`), /Device not accepted/);
    } finally {
      h.team.reviewMode = false;
    }
  });

  it('a revoked API key: the device fails with a clear page, the account turns unhealthy, new super tasks are refused', async () => {
    h.team.keyRevoked = true;
    try {
      const enrollment = await enrollDevice(h, newDevice());
      const status = await waitEnrollment(h, enrollment);
      assert.equal(status.state, 'failed');
      assert.equal(status.error.code, 'developer_key_rejected');
      assert.match(await page(h, `?enrollment=${enrollment}`), /needs attention from its owner/);
      const account = (await h.api.get(`/v1/developer-accounts/${h.developerAccount.id}`)).body.data;
      assert.equal(account.health, 'key_rejected');
      assert.equal(account.usable, false);
      const upload = await h.api.upload('again.ipa', Buffer.from(await (await fetch(`${h.server.url}/v1/tasks/${h.task.task_id}/artifact`, { headers: { authorization: `Bearer ${h.server.key}` } })).arrayBuffer()));
      const refused = await h.api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'super' });
      assert.equal(refused.status, 422);
      assert.equal(refused.body.error, 'certificate_required');
    } finally {
      h.team.keyRevoked = false;
    }
    // Once the key works again, a check makes the account usable.
    const checked = await h.api.post(`/v1/developer-accounts/${h.developerAccount.id}/check`);
    assert.equal(checked.body.data.health, 'ok', JSON.stringify(checked.body));
  });

  it('a revoked distribution certificate is reported by the check', async () => {
    h.team.revokeCertificates();
    const checked = await h.api.post(`/v1/developer-accounts/${h.developerAccount.id}/check`);
    assert.equal(checked.body.data.health, 'certificate_revoked');
    const enrollment = await enrollDevice(h, newDevice());
    const status = await waitEnrollment(h, enrollment);
    assert.equal(status.error.code, 'developer_certificate_unusable');
  });
});
