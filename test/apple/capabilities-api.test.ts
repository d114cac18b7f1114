// Bundle id capabilities through the App Store Connect client, against the fake that validates
// every request and response against the OpenAPI subset; and the fake failing loudly on
// requests that do not match the spec or that it does not implement.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppStoreConnect } from '../../src/apple/app-store-connect.ts';
import { AscClient } from '../../src/apple/client.ts';
import { AppError } from '../../src/errors.ts';
import { parseProvisioningProfile } from '../../src/signing/ios/profile/index.ts';
import { plistToJs } from '../../src/signing/plist/index.ts';
import { needsAscSpec, startFakeAsc, type FakeAppStoreConnect, type FakeTeam } from '../support/asc-server.ts';

describe('App Store Connect capabilities', needsAscSpec(), () => {
  let asc: FakeAppStoreConnect;
  let team: FakeTeam;
  let api: AppStoreConnect;

  before(async () => {
    ({ asc, team } = await startFakeAsc());
    api = new AppStoreConnect({ baseUrl: asc.url, key: team.key, baseDelayMs: 1 });
  });
  after(() => asc.close());

  it('enables capabilities once, finding one already enabled instead of failing', async () => {
    const bundle = await api.ensureBundleId('com.example.capable', 'Signet com example capable');
    assert.deepEqual((await api.listCapabilities(bundle.id)).map((c) => c.capabilityType).sort(), ['GAME_CENTER', 'IN_APP_PURCHASE'], 'a new App ID starts as in the portal');
    const push = await api.enableCapability(bundle.id, { capabilityType: 'PUSH_NOTIFICATIONS', settings: [] });
    const again = await api.enableCapability(bundle.id, { capabilityType: 'PUSH_NOTIFICATIONS', settings: [] });
    assert.equal(again.id, push.id, 'a 409 for an enabled capability is found in the list');
    await api.enableCapability(bundle.id, { capabilityType: 'DATA_PROTECTION', settings: [{ key: 'DATA_PROTECTION_PERMISSION_LEVEL', options: [{ key: 'COMPLETE_PROTECTION', enabled: true }] }] });
    const listed = await api.listCapabilities(bundle.id);
    assert.equal(listed.filter((c) => c.capabilityType === 'PUSH_NOTIFICATIONS').length, 1);

    // Profiles of the App ID grant what its capabilities grant.
    const [certificate] = await api.listDistributionCertificates();
    const { device } = await api.registerDevice({ udid: '00008030-0000000000CAFE01', name: 'iPhone' });
    const profile = parseProvisioningProfile((await api.createAdHocProfile({ name: 'capable', bundleIdId: bundle.id, certificateIds: [certificate!.id], deviceIds: [device.id] })).content);
    const granted = plistToJs(profile.entitlements) as Record<string, unknown>;
    assert.equal(granted['aps-environment'], 'production');
    assert.equal(granted['com.apple.developer.default-data-protection'], 'NSFileProtectionComplete');
    assert.deepEqual(asc.violations, []);
  });

  it('refuses capabilities on the wildcard App ID', async () => {
    const wildcard = await api.ensureBundleId('*', 'Signet Wildcard');
    await assert.rejects(api.enableCapability(wildcard.id, { capabilityType: 'PUSH_NOTIFICATIONS', settings: [] }), (e: unknown) => e instanceof AppError && e.code === 'apple_request_failed');
  });

  it('finds a bundle id another worker of the team registered between its lookup and its POST', async () => {
    let seeded = false;
    const racing = new AppStoreConnect(
      new AscClient({
        baseUrl: asc.url,
        key: team.key,
        fetch: async (input, init) => {
          if (init?.method === 'POST' && String(input).endsWith('/v1/bundleIds') && !seeded) {
            seeded = true;
            asc.seedBundleId(team, 'com.example.raced');
          }
          return fetch(input, init);
        },
      }),
    );
    const found = await racing.ensureBundleId('com.example.raced', 'raced');
    assert.ok(seeded);
    assert.equal(found.id, asc.bundleIdOf(team, 'com.example.raced')!.id);
    const other = new AppStoreConnect({ baseUrl: asc.url, key: asc.addTeam('ELSEWHERE1').key });
    await assert.rejects(other.ensureBundleId('com.example.raced', 'raced'), (e: unknown) => e instanceof AppError && e.code === 'bundle_id_unavailable' && /another Apple team/.test(e.message));
    assert.deepEqual(asc.violations, []);
  });

  it('the fake answers requests outside the OpenAPI subset with 400 and records them', async () => {
    const client = new AscClient({ baseUrl: asc.url, key: team.key, maxRetries: 0 });
    const bundle = asc.bundleIdOf(team, 'com.example.capable')!;
    const invalid = { data: { type: 'bundleIdCapabilities', attributes: { capabilityType: 'TELEPORTATION' }, relationships: { bundleId: { data: { type: 'bundleIds', id: bundle.id } } } } };
    await assert.rejects(client.post('/v1/bundleIdCapabilities', invalid), (e: unknown) => (e as { status?: number }).status === 400);
    await assert.rejects(client.get('/v1/bundleIds', { 'filter[colour]': 'red' }), (e: unknown) => (e as { status?: number }).status === 400);
    await assert.rejects(client.get('/v1/apps'), (e: unknown) => (e as { status?: number }).status === 400);
    // In the spec, but not something the fake does: loud as well.
    await assert.rejects(client.patch(`/v1/bundleIds/${bundle.id}`, { data: { type: 'bundleIds', id: bundle.id, attributes: { name: 'renamed' } } }), (e: unknown) => (e as { status?: number }).status === 404);
    for (const expected of [/capabilityType must be equal to one of the allowed values/, /filter\[colour\] is not defined/, /GET \/v1\/apps is not an operation of the spec subset/, /does not implement PATCH/]) {
      assert.ok(asc.violations.some((v) => expected.test(v)), `${expected} in ${asc.violations.join('; ')}`);
    }
    asc.violations.length = 0;
  });
});
