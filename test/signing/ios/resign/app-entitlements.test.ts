// readProvisionedBundles: each provisioned bundle of an .ipa with the entitlements of its current
// signature (what a signing plan asks App IDs and capabilities for), the app first.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { readProvisionedBundles } from '../../../../src/signing/ios/resign/index.ts';
import { plistToJs } from '../../../../src/signing/plist/index.ts';
import { generatedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { SHIPPED_GROUP, SHIPPED_TEAM, shippedApp } from '../../../support/shipped-app.ts';

describe('reading what each bundle is signed with', needsToolchain(), () => {
  it('lists the app and its extension with their own entitlements, frameworks left out', async () => {
    const { app, bytes } = await shippedApp('app-entitlements');
    const bundles = await readProvisionedBundles(new BufferSource(bytes));
    assert.deepEqual(bundles.map((b) => [b.bundleId, b.kind, b.relativeDir]), [
      [app.bundleId, 'app', ''],
      [app.extensionId, 'appex', 'PlugIns/Widget.appex/'],
    ]);
    const [main, widget] = bundles.map((b) => plistToJs(b.entitlements!) as Record<string, unknown>);
    assert.equal(main!['aps-environment'], 'development');
    assert.equal(main!['application-identifier'], `${SHIPPED_TEAM}.${app.bundleId}`);
    assert.deepEqual(widget!['com.apple.security.application-groups'], [SHIPPED_GROUP]);
    assert.equal(widget!['aps-environment'], undefined);
  });

  it('reports no entitlements for executables that were never signed with any', async () => {
    const bundles = await readProvisionedBundles(new BufferSource(generatedApp('app-entitlements-unsigned').bytes));
    assert.equal(bundles.length, 2);
    assert.ok(bundles.every((b) => b.entitlements === undefined));
  });
});
