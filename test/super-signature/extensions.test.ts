// Super signature of an app with an extension, both with capabilities (test/support/shipped-app.ts:
// the app with push and associated domains, the widget with an app group): each bundle gets an
// explicit App ID and an ad-hoc profile of its own, made together for the device set; the
// device's build embeds each bundle's own profile with entitlements derived from it, and is
// built incrementally from the prepared build. App ID registration is idempotent when several
// workers (separate processes, no shared lock) do it at once.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppStoreConnect } from '../../src/apple/app-store-connect.ts';
import { AppIdRegistry } from '../../src/super-signature/app-ids.ts';
import type { SuperAppPlan } from '../../src/super-signature/capability-plan.ts';
import { needsAscSpec } from '../support/asc-server.ts';
import { newDevice } from '../support/device.ts';
import { testOutputDir } from '../support/fixtures.ts';
import type { GeneratedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';
import { testPki } from '../support/pki.ts';
import { SHIPPED_GROUP, shippedApp } from '../support/shipped-app.ts';
import { strictIpaCheck } from '../support/strict-ipa.ts';
import { deviceBuild, enrollDevice, releaseApp, startSuperHarness, waitEnrollment, type SuperHarness } from './harness.ts';

describe('super signature of an app with an extension', { skip: needsAscSpec().skip || needsToolchain().skip }, () => {
  let h: SuperHarness;
  let app: GeneratedApp;
  before(async () => {
    h = await startSuperHarness('extensions', { release: false });
    const shipped = await shippedApp('super-extensions');
    app = shipped.app;
    await releaseApp(h, 'extensions', shipped.bytes);
  });
  after(() => h?.close());

  it('registers one explicit App ID per bundle with that bundle’s capabilities', () => {
    const main = h.asc.bundleIdOf(h.team, app.bundleId)!;
    const widget = h.asc.bundleIdOf(h.team, app.extensionId)!;
    assert.ok(main && widget);
    assert.ok(main.capabilities.some((c) => c.type === 'PUSH_NOTIFICATIONS') && main.capabilities.some((c) => c.type === 'ASSOCIATED_DOMAINS'));
    assert.ok(widget.capabilities.some((c) => c.type === 'APP_GROUPS'));
    assert.ok(!widget.capabilities.some((c) => c.type === 'PUSH_NOTIFICATIONS'), 'the widget asks for no push');
    assert.deepEqual(h.task.bundles.map((b: any) => [b.bundle_id, b.application_identifier]), [
      [app.bundleId, `${h.team.teamId}.${app.bundleId}`],
      [app.extensionId, `${h.team.teamId}.${app.extensionId}`],
    ]);
    assert.deepEqual(h.task.warnings.map((w: any) => [w.bundle_id, w.entitlement, w.reason]), [[app.extensionId, 'com.apple.security.application-groups', 'identifiers_not_creatable']]);
    assert.match(h.task.warnings[0].message, new RegExp(SHIPPED_GROUP.replace(/\./g, '\\.')));
  });

  it('gives each bundle its own ad-hoc profile in the device’s build', async () => {
    const device = newDevice();
    const enrollment = await enrollDevice(h, device);
    const status = await waitEnrollment(h, enrollment);
    assert.equal(status.state, 'ready', JSON.stringify(status.error));
    assert.equal(h.team.profiles.length, 2, 'one profile per App ID');
    const ipa = await deviceBuild(h, enrollment);
    const dir = testOutputDir('super-extensions');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${enrollment}.ipa`);
    writeFileSync(file, ipa);

    const strict = strictIpaCheck(file, testPki().root.certificatePem, `super-extensions-${enrollment}`);
    assert.deepEqual(strict.problems, []);
    const byId = Object.fromEntries(strict.bundles.map((b) => [b.bundleId, b]));
    const main = byId[app.bundleId]!;
    const widget = byId[app.extensionId]!;
    const profileOf = (identifier: string) => h.team.profiles.find((p) => p.bundleIdId === h.asc.bundleIdOf(h.team, identifier)!.id)!;
    assert.equal(main.profile?.uuid, profileOf(app.bundleId).uuid);
    assert.equal(widget.profile?.uuid, profileOf(app.extensionId).uuid);
    assert.equal(main.entitlements?.['aps-environment'], 'production');
    assert.deepEqual(main.entitlements?.['com.apple.developer.associated-domains'], ['applinks:example.com']);
    assert.equal(widget.entitlements?.['aps-environment'], undefined);
    assert.equal(widget.entitlements?.['application-identifier'], `${h.team.teamId}.${app.extensionId}`);
    assert.equal(widget.entitlements?.['com.apple.security.application-groups'], undefined, 'the group cannot be created in this team');
    const build = await h.server.service.db.repos.superSignature.findBuild(status.build.id);
    assert.ok(build?.shared_blob_key, 'incremental with one profile per bundle');
    assert.deepEqual(h.asc.violations, []);
  });

  it('registers App IDs and capabilities once when several workers do it at the same time', async () => {
    const { db } = h.server.service;
    const [account] = await db.repos.developerAccounts.list((await db.repos.tasks.find(null, h.task.task_id))!.account_id);
    assert.ok(account);
    const plan: SuperAppPlan = {
      version: 1,
      mode: 'explicit',
      bundles: ['com.signet.race', 'com.signet.race.share'].map((id, i) => ({
        path: `Payload/Race.app/${i === 0 ? '' : 'PlugIns/Share.appex/'}`,
        bundleId: id,
        appId: id,
        capabilities: [
          { capabilityType: 'PUSH_NOTIFICATIONS', settings: [] },
          { capabilityType: 'DATA_PROTECTION', settings: [{ key: 'DATA_PROTECTION_PERMISSION_LEVEL', options: [{ key: 'COMPLETE_PROTECTION', enabled: true }] }] },
        ],
        entitlementsXml: null,
      })),
      leftOut: [],
    };
    h.asc.bundleIdDelayMs = 30; // widen the window between a lookup and the registration
    // Separate registries and API clients: two worker processes share nothing but the database.
    const workers = [1, 2, 3].map(() => ({ registry: new AppIdRegistry(db), api: new AppStoreConnect({ baseUrl: h.asc.url, key: h.team.key, baseDelayMs: 1 }) }));
    const posts = () => h.asc.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/bundleId')).length;
    const before = posts();
    const rows = await Promise.all(workers.map((w) => w.registry.ensure(w.api, account, plan)));
    h.asc.bundleIdDelayMs = 0;
    assert.ok(posts() - before > 2 + 4, 'the workers raced (some registrations were answered "already there")');
    for (const identifier of ['com.signet.race', 'com.signet.race.share']) {
      assert.equal(h.asc.bundleIds.filter((b) => b.identifier === identifier).length, 1, `${identifier} registered once`);
      const capabilities = h.asc.bundleIdOf(h.team, identifier)!.capabilities.map((c) => c.type);
      assert.equal(capabilities.filter((c) => c === 'PUSH_NOTIFICATIONS').length, 1);
      assert.equal(capabilities.filter((c) => c === 'DATA_PROTECTION').length, 1);
    }
    assert.equal(new Set(rows.flat().map((r) => r.id)).size, 2, 'one row per App ID');
    assert.ok(rows.flat().every((r) => r.state === 'registered' && JSON.parse(r.capabilities_json).includes('PUSH_NOTIFICATIONS')));
    assert.deepEqual(h.asc.violations, []);
  });
});
