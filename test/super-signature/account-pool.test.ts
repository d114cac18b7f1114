// The account pool with two developer accounts: a device goes to an account with a free slot for
// its class, stays with it (sticky), and a full account is skipped whether Signet or Apple
// noticed first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { needsAscSpec, type FakeTeam } from '../support/asc-server.ts';
import { newDevice } from '../support/device.ts';
import { testPki } from '../support/pki.ts';
import { accountForm, enrollDevice, startSuperHarness, waitEnrollment, type SuperHarness } from './harness.ts';

describe('account pool', needsAscSpec(), () => {
  let h: SuperHarness;
  let second: FakeTeam;
  let secondId: string;

  before(async () => {
    h = await startSuperHarness('pool');
    second = h.asc.addTeam();
    second.addCertificate(testPki().leaf.certificate);
    const created = await h.api.form('/v1/developer-accounts', accountForm(second, { name: 'Second team' }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    secondId = created.body.data.id;
  });
  after(() => h?.close());

  const accountOf = async (udid: string) =>
    (await h.server.service.db.kysely.selectFrom('developer_devices').select('developer_account_id').where('udid', '=', udid).execute()).map((r) => r.developer_account_id);

  it('keeps devices in the account already hosting the app, and a device where it is', async () => {
    const a = newDevice();
    assert.equal((await waitEnrollment(h, await enrollDevice(h, a))).state, 'ready');
    const [home] = await accountOf(a.udid);
    const b = newDevice();
    assert.equal((await waitEnrollment(h, await enrollDevice(h, b))).state, 'ready');
    const [other] = await accountOf(b.udid);
    // The hosting account wins over the emptier one: its profile grows and its prepared build is reused.
    assert.equal(other, home);
    // Sticky: the first device comes back and stays in its account (no second slot anywhere).
    assert.equal((await waitEnrollment(h, await enrollDevice(h, a))).state, 'ready');
    assert.deepEqual(await accountOf(a.udid), [home]);
  });

  it('skips an account whose slots Signet counted as used', async () => {
    await h.server.service.db.kysely.updateTable('developer_accounts').set({ slots_per_class: 1 }).where('id', '=', h.developerAccount.id).execute();
    const device = newDevice();
    const status = await waitEnrollment(h, await enrollDevice(h, device));
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    assert.deepEqual(await accountOf(device.udid), [secondId]);
  });

  it('skips an account Apple says is full and resyncs its count', async () => {
    second.deviceLimit = second.devicesOfClass('IPHONE');
    await h.server.service.db.kysely.updateTable('developer_accounts').set({ slots_per_class: 100 }).where('id', '=', h.developerAccount.id).execute();
    // Make the second account look emptier to Signet, so the pool tries it first.
    await h.server.service.db.kysely.deleteFrom('developer_devices').where('developer_account_id', '=', secondId).execute();
    const device = newDevice();
    const status = await waitEnrollment(h, await enrollDevice(h, device));
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    assert.deepEqual(await accountOf(device.udid), [h.developerAccount.id]);
    const resynced = (await h.api.get(`/v1/developer-accounts/${secondId}`)).body.data;
    assert.equal(resynced.slots.iphone.used, second.devicesOfClass('IPHONE'), 'the full account was resynced from Apple');
    assert.deepEqual(h.asc.violations, []);
  });
});
