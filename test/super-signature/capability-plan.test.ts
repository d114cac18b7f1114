// The App ID plan of a super-signed app (src/super-signature/capability-plan.ts): which
// capabilities each bundle's entitlements need, which entitlements cannot be carried over and
// why, and the template profiles that grant exactly what is carried over. The capability table
// is checked against the OpenAPI subset's CapabilityType and CapabilitySetting enums.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CAPABILITY_TYPES, capabilityForEntitlement, capabilitySettings } from '../../src/apple/capabilities.ts';
import { deriveEntitlements, parseProvisioningProfile } from '../../src/signing/ios/profile/index.ts';
import { parsePlist, plistFromJs, plistToJs, type PlistDict } from '../../src/signing/plist/index.ts';
import { planCapabilities } from '../../src/super-signature/capability-plan.ts';
import { templateProfiles } from '../../src/super-signature/template-profile.ts';
import { needsAscSpec } from '../support/asc-server.ts';
import { repoRoot } from '../support/fixtures.ts';
import { testPki } from '../support/pki.ts';

const entitlements = (value: Record<string, unknown>) => plistFromJs(value as never) as PlistDict;
const bundle = (bundleId: string, value?: Record<string, unknown>, relativeDir = '') => ({
  path: `Payload/A.app/${relativeDir}`,
  relativeDir,
  kind: relativeDir === '' ? ('app' as const) : ('appex' as const),
  bundleId,
  ...(value ? { entitlements: entitlements(value) } : {}),
});
const identity = (bundleId: string) => ({ 'application-identifier': `OLDTEAM001.${bundleId}`, 'com.apple.developer.team-identifier': 'OLDTEAM001', 'get-task-allow': true, 'keychain-access-groups': [`OLDTEAM001.${bundleId}`] });

describe('the App ID plan of a super-signed app', () => {
  it('keeps the wildcard for an app that needs no capability', () => {
    const plan = planCapabilities([bundle('com.x.app', identity('com.x.app')), bundle('com.x.app.share', undefined, 'PlugIns/Share.appex/')]);
    assert.equal(plan.mode, 'wildcard');
    assert.deepEqual(plan.bundles.map((b) => [b.bundleId, b.appId]), [['com.x.app', '*'], ['com.x.app.share', '*']]);
    assert.deepEqual(plan.leftOut, []);
  });

  it('plans explicit App IDs per bundle with the capabilities each needs', () => {
    const plan = planCapabilities([
      bundle('com.x.app', { ...identity('com.x.app'), 'aps-environment': 'development', 'com.apple.developer.associated-domains': ['applinks:x.com'], 'com.apple.developer.default-data-protection': 'NSFileProtectionCompleteUnlessOpen' }),
      bundle('com.x.app.share', identity('com.x.app.share'), 'PlugIns/Share.appex/'),
    ]);
    assert.equal(plan.mode, 'explicit');
    assert.deepEqual(plan.bundles.map((b) => [b.appId, b.capabilities.map((c) => c.capabilityType)]), [
      ['com.x.app', ['PUSH_NOTIFICATIONS', 'ASSOCIATED_DOMAINS', 'DATA_PROTECTION']],
      ['com.x.app.share', []],
    ]);
    assert.deepEqual(plan.bundles[0]!.capabilities[2]!.settings, [{ key: 'DATA_PROTECTION_PERMISSION_LEVEL', options: [{ key: 'PROTECTED_UNLESS_OPEN', enabled: true }] }]);
  });

  it('leaves out identifiers the API cannot create and entitlements no capability grants, naming them', () => {
    const plan = planCapabilities([
      bundle('com.x.app', {
        ...identity('com.x.app'),
        'com.apple.security.application-groups': ['group.com.x'],
        'com.apple.developer.in-app-payments': ['merchant.com.x'],
        'com.apple.developer.pass-type-identifiers': ['OLDTEAM001.*'],
        'com.apple.developer.icloud-container-identifiers': [],
        'com.apple.developer.usernotifications.time-sensitive': true,
      }),
    ]);
    assert.deepEqual(plan.bundles[0]!.capabilities.map((c) => c.capabilityType).sort(), ['APPLE_PAY', 'APP_GROUPS', 'ICLOUD', 'WALLET']);
    assert.deepEqual(plan.leftOut.map((w) => [w.entitlement, w.reason]), [
      ['com.apple.security.application-groups', 'identifiers_not_creatable'],
      ['com.apple.developer.in-app-payments', 'identifiers_not_creatable'],
      ['com.apple.developer.usernotifications.time-sensitive', 'no_capability'],
    ]);
    assert.match(plan.leftOut[0]!.message, /app group ids \(group\.com\.x\)/);
    assert.match(plan.leftOut[1]!.message, /merchant ids \(merchant\.com\.x\)/);
    const carried = [...(parsePlist(Buffer.from(plan.bundles[0]!.entitlementsXml!)).value as PlistDict).value.keys()];
    assert.ok(carried.includes('com.apple.developer.pass-type-identifiers'), 'the team pass type wildcard is carried over');
    assert.ok(carried.includes('com.apple.developer.icloud-container-identifiers'), 'an empty container list names nothing to create');
  });

  it('makes template profiles whose derived entitlements are what is carried over, in the new team', () => {
    const original = { ...identity('com.x.app'), 'aps-environment': 'development', 'com.apple.developer.associated-domains': ['applinks:x.com'], 'com.apple.security.application-groups': ['group.com.x'] };
    const plan = planCapabilities([bundle('com.x.app', original)]);
    const pki = testPki();
    const [template] = templateProfiles({ identity: pki.leaf, teamId: pki.teamId, teamName: 'Signet Test Inc', plan });
    const profile = parseProvisioningProfile(template!);
    assert.equal(profile.applicationIdentifier, `${pki.teamId}.com.x.app`);
    const derived = deriveEntitlements({ profile, bundleId: 'com.x.app', original: entitlements(original) });
    assert.deepEqual(plistToJs(derived.entitlements), {
      'application-identifier': `${pki.teamId}.com.x.app`,
      'com.apple.developer.team-identifier': pki.teamId,
      'get-task-allow': false,
      'keychain-access-groups': [`${pki.teamId}.com.x.app`],
      'aps-environment': 'production',
      'com.apple.developer.associated-domains': ['applinks:x.com'],
    });
    assert.deepEqual(derived.dropped, [{ key: 'com.apple.security.application-groups', reason: 'not_granted' }]);
  });
});

describe('the capability table', needsAscSpec(), () => {
  it('names only capability types and settings of the App Store Connect OpenAPI document', () => {
    const file = path.resolve(repoRoot, '..', 'shared', 'asc-openapi', 'asc-provisioning-subset-3.7.0.json');
    assert.ok(existsSync(file));
    const spec = JSON.parse(readFileSync(file, 'utf8'));
    assert.deepEqual([...CAPABILITY_TYPES].sort(), [...spec.components.schemas.CapabilityType.enum].sort());
    const keys = new Set(spec.components.schemas.CapabilitySetting.properties.key.enum);
    const options = new Set(spec.components.schemas.CapabilityOption.properties.key.enum);
    for (const type of CAPABILITY_TYPES) {
      for (const setting of capabilitySettings(type, new Map([['com.apple.developer.default-data-protection', 'NSFileProtectionCompleteUntilFirstUserAuthentication']]))) {
        assert.ok(keys.has(setting.key), setting.key);
        for (const option of setting.options) assert.ok(options.has(option.key), option.key);
      }
    }
    for (const key of ['aps-environment', 'com.apple.developer.associated-domains', 'com.apple.developer.healthkit', 'com.apple.developer.siri']) {
      assert.ok(CAPABILITY_TYPES.includes(capabilityForEntitlement(key)!.capability), key);
    }
    assert.equal(capabilityForEntitlement('toString'), undefined, 'no prototype keys');
  });
});
