// Issue 20, super signature with capabilities: fastlane's very-capable-app (24 entitlements:
// push, associated domains, HealthKit, HomeKit, Siri, NFC, iCloud, app groups, Wallet, Apple Pay,
// network extensions…) through the App Store Connect fake that validates every request against
// the OpenAPI subset. The app gets an explicit App ID with the capabilities its entitlements
// need, the device's build keeps aps-environment and the associated domains, and the task's
// warnings name what cannot be carried over (the iCloud containers). An App ID another team owns
// is refused with bundle_id_unavailable, or hosted by an account whose team can have it.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { needsAscSpec } from '../support/asc-server.ts';
import { newDevice } from '../support/device.ts';
import { needsSharedFixtures, repoRoot, sharedFixture, testOutputDir } from '../support/fixtures.ts';
import { testPki } from '../support/pki.ts';
import { strictIpaCheck } from '../support/strict-ipa.ts';
import { accountForm, deviceBuild, enrollDevice, releaseApp, startSuperHarness, superTask, waitEnrollment, type SuperHarness } from './harness.ts';

const APP_ID = 'org.fastlane.very-capable-app';
const CONTAINER = 'iCloud.org.fastlane.very-capable-app';
const fixture = () => readFileSync(sharedFixture('ios/fastlane/ipas/very-capable-app.ipa')!);

function outputFile(name: string, bytes: Buffer): string {
  const dir = testOutputDir('super-capabilities');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

describe('super signature with capabilities (very-capable-app)', { skip: needsAscSpec().skip || needsSharedFixtures('ios/fastlane/ipas').skip }, () => {
  let h: SuperHarness;
  before(async () => {
    h = await startSuperHarness('capabilities', { release: false });
    await releaseApp(h, 'very-capable', fixture());
  });
  after(() => h?.close());

  it('registers an explicit App ID with the capabilities the entitlements need', () => {
    const bundle = h.asc.bundleIdOf(h.team, APP_ID);
    assert.ok(bundle, 'the explicit App ID exists at Apple');
    const enabled = bundle.capabilities.map((c) => c.type);
    for (const type of ['PUSH_NOTIFICATIONS', 'ASSOCIATED_DOMAINS', 'HEALTHKIT', 'HOMEKIT', 'SIRIKIT', 'NFC_TAG_READING', 'DATA_PROTECTION', 'NETWORK_EXTENSIONS', 'PERSONAL_VPN', 'ICLOUD', 'APP_GROUPS', 'WALLET', 'APPLE_PAY', 'HOT_SPOT', 'MULTIPATH', 'INTER_APP_AUDIO', 'WIRELESS_ACCESSORY_CONFIGURATION']) {
      assert.ok(enabled.includes(type), `${type} enabled (got ${enabled.join(', ')})`);
    }
    assert.equal(new Set(enabled).size, enabled.length, 'each capability enabled once');
    const protection = bundle.capabilities.find((c) => c.type === 'DATA_PROTECTION')!;
    assert.equal(protection.settings[0]?.options?.[0]?.key, 'COMPLETE_PROTECTION', 'NSFileProtectionComplete');
    assert.deepEqual(h.asc.violations, [], 'every request matched the OpenAPI subset');
  });

  it('answers with the App ID, its capabilities and what could not be carried over', () => {
    const task = h.task;
    assert.equal(task.status, 'succeeded');
    assert.equal(task.bundles.length, 1);
    assert.equal(task.bundles[0].bundle_id, APP_ID);
    assert.equal(task.bundles[0].application_identifier, `${h.team.teamId}.${APP_ID}`);
    assert.equal(task.bundles[0].profile, null, 'each device gets its own profile');
    assert.ok(task.bundles[0].capabilities.includes('PUSH_NOTIFICATIONS') && task.bundles[0].capabilities.includes('ASSOCIATED_DOMAINS'));
    const leftOut = Object.fromEntries(task.warnings.map((w: any) => [w.entitlement, w]));
    assert.deepEqual(Object.keys(leftOut).sort(), ['com.apple.developer.icloud-container-identifiers', 'com.apple.developer.ubiquity-container-identifiers']);
    for (const warning of task.warnings) {
      assert.equal(warning.code, 'entitlement_left_out');
      assert.equal(warning.reason, 'identifiers_not_creatable');
      assert.equal(warning.bundle_id, APP_ID);
      assert.ok(warning.message.includes(CONTAINER), warning.message);
    }
  });

  it('builds the device’s app with push and associated domains, from Apple’s profile for the App ID', async () => {
    const device = newDevice();
    const enrollment = await enrollDevice(h, device);
    const status = await waitEnrollment(h, enrollment);
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    const ipa = await deviceBuild(h, enrollment);
    const file = outputFile(`device-${enrollment}.ipa`, ipa);

    const strict = strictIpaCheck(file, testPki().root.certificatePem, `very-capable-${enrollment}`);
    assert.deepEqual(strict.problems, [], 'the independent strict check');
    const [app] = strict.bundles;
    assert.ok(app?.entitlements && app.profile);
    assert.equal(app.entitlements['aps-environment'], 'production');
    assert.deepEqual(app.entitlements['com.apple.developer.associated-domains'], ['webcredentials:example.com']);
    assert.equal(app.entitlements['application-identifier'], `${h.team.teamId}.${APP_ID}`);
    for (const kept of ['com.apple.developer.healthkit', 'com.apple.developer.homekit', 'com.apple.developer.siri', 'com.apple.developer.nfc.readersession.formats', 'com.apple.developer.default-data-protection', 'com.apple.developer.ubiquity-kvstore-identifier']) {
      assert.ok(kept in app.entitlements, `${kept} carried over`);
    }
    assert.equal(app.entitlements['com.apple.developer.icloud-container-identifiers'], undefined);
    assert.equal(app.entitlements['get-task-allow'], false);
    const appleProfile = h.team.profiles.at(-1)!;
    assert.equal(app.profile.uuid, appleProfile.uuid, 'the device build embeds Apple’s ad-hoc profile');
    assert.equal(app.profile.applicationIdentifier, `${h.team.teamId}.${APP_ID}`);
    assert.equal(appleProfile.bundleIdId, h.asc.bundleIdOf(h.team, APP_ID)!.id, 'made for the explicit App ID');

    const verify = spawnSync(process.execPath, [path.join(repoRoot, 'src/main/cli.ts'), 'verify', file], { encoding: 'utf8' });
    assert.equal(verify.status, 0, `signet verify: ${verify.stdout}${verify.stderr}`);
    const build = await h.server.service.db.repos.superSignature.findBuild(status.build.id);
    assert.ok(build?.shared_blob_key, 'built incrementally: the prepared build’s entitlements are the ones Apple’s profile grants');
    assert.deepEqual(h.asc.violations, []);
  });

  it('adds a second device without registering anything again', async () => {
    const before = h.asc.requests.filter((r) => r.path.startsWith('/v1/bundleId')).length;
    const enrollment = await enrollDevice(h, newDevice());
    const status = await waitEnrollment(h, enrollment);
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    assert.equal(h.asc.requests.filter((r) => r.path.startsWith('/v1/bundleId')).length, before, 'App ID and capabilities known: no App Store Connect call for them');
    assert.equal(h.team.profiles.length, 1, 'the replaced profile was deleted at Apple');
    assert.equal(h.team.profiles[0]!.deviceIds.length, 2);
  });
});

describe('super signature of an App ID another team owns', { skip: needsAscSpec().skip || needsSharedFixtures('ios/fastlane/ipas').skip }, () => {
  let h: SuperHarness;
  before(async () => {
    h = await startSuperHarness('capabilities-taken', { release: false });
  });
  after(() => h?.close());

  it('refuses the task with bundle_id_unavailable', async () => {
    h.asc.seedBundleId(h.asc.addTeam('OWNERTEAM1'), APP_ID);
    const task = await superTask(h.api, 'taken', fixture());
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'bundle_id_unavailable');
    assert.match(task.error.message, /org\.fastlane\.very-capable-app/);
    assert.deepEqual(h.asc.violations, []);
  });

  it('uses the developer account whose team owns it, and sends devices there only', async () => {
    const owner = h.asc.teams.find((t) => t.teamId === 'OWNERTEAM1')!;
    owner.addCertificate(testPki().leaf.certificate);
    const registered = await h.api.form('/v1/developer-accounts', accountForm(owner, { name: 'Owner team' }));
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    await releaseApp(h, 'taken-owner', fixture());
    assert.ok(h.asc.bundleIdOf(owner, APP_ID)?.capabilities.some((c) => c.type === 'PUSH_NOTIFICATIONS'), 'capabilities enabled in the owner team');
    assert.equal(h.asc.bundleIdOf(h.team, APP_ID), undefined);

    const device = newDevice();
    const status = await waitEnrollment(h, await enrollDevice(h, device));
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    assert.ok(owner.devices.some((d) => d.udid === device.udid), 'registered in the team that owns the App ID');
    assert.ok(!h.team.devices.some((d) => d.udid === device.udid), 'no slot used in the other team');
    assert.deepEqual(h.asc.violations, []);
  });

  it('moves a device known to an account that cannot host the app to one that can', async () => {
    const { db } = h.server.service;
    const accounts = await db.repos.developerAccounts.list((await db.repos.tasks.find(null, h.task.task_id))!.account_id);
    const other = accounts.find((a) => a.team_id === h.team.teamId && a.name !== 'Owner team')!;
    // The device already has a slot in the first team (another app sent it there earlier), and
    // that account's knowledge of the App ID is gone: the flow must find out again, at Apple.
    const device = newDevice();
    h.team.seedDevice(device.udid);
    const slot = await db.transaction((tx) => tx.repos.developerAccounts.reserveSlot({ developerAccountId: other.id, udid: device.udid, deviceClass: 'IPHONE', name: null, lock: db.dialect === 'postgres' }));
    await db.repos.developerAccounts.updateDevice(slot!.device.id, { status: 'ENABLED', ascDeviceId: h.team.devices.at(-1)!.id });
    await db.kysely.deleteFrom('developer_app_ids').where('developer_account_id', '=', other.id).execute();

    const status = await waitEnrollment(h, await enrollDevice(h, device));
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    const owner = h.asc.teams.find((t) => t.teamId === 'OWNERTEAM1')!;
    assert.ok(owner.devices.some((d) => d.udid === device.udid), 'provisioned in the team that owns the App ID');
    assert.equal((await db.repos.developerAppIds.find(other.id, APP_ID))?.state, 'unavailable', 'remembered for the next devices');
    assert.deepEqual(h.asc.violations, []);
  });
});
