// Entitlement derivation (ios-signing.md §13): wildcard expansion, same-team re-sign against the
// archived Xcode entitlements, cross-team re-sign, and the grant rules.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { SigningError } from '../../../../src/signing/errors.ts';
import { deriveEntitlements, grants, parseProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import {
  decodeEntitlementsDer,
  encodeEntitlementsDer,
  expectType,
  parseXmlPlist,
  plistArray,
  plistBoolean,
  plistDict,
  plistEqual,
  plistFromJs,
  plistString,
  plistToJs,
  writeXmlPlist,
  type PlistDict,
  type PlistValue,
} from '../../../../src/signing/plist/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';
import { testPki } from '../../../support/pki.ts';

const APP = 'ios/fastlane/very-capable-app.xcarchive/Products/Applications/very-capable-app.app';

/** No value anywhere in the entitlements may still be a wildcard app id. */
function assertNoWildcards(value: PlistValue, where = '$'): void {
  if (value.type === 'string') assert.ok(!/(^|\.)\*$/.test(value.value), `${where} = ${value.value}`);
  if (value.type === 'array') value.value.forEach((v, i) => assertNoWildcards(v, `${where}[${i}]`));
  if (value.type === 'dict') for (const [k, v] of value.value) assertNoWildcards(v, `${where}.${k}`);
}

/** Slot 5 and slot 7 must describe the same dictionary (ios-signing.md §8.2). */
function assertEncodable(entitlements: PlistDict): void {
  const fromDer = decodeEntitlementsDer(encodeEntitlementsDer(entitlements));
  assert.ok(plistEqual(parseXmlPlist(writeXmlPlist(entitlements)), fromDer));
}

describe('derivation from real profiles', needsSharedFixtures(), () => {
  test('isign wildcard profile, no original entitlements: wildcards resolved to the bundle id', () => {
    const profile = parseProvisioningProfile(readFileSync(sharedFixture('ios/isign/credentials/test.mobileprovision')!));
    const { entitlements, dropped } = deriveEntitlements({ profile, bundleId: 'com.example.app' });
    assert.deepEqual(plistToJs(entitlements), {
      'application-identifier': 'ISIGNTESTS.com.example.app',
      'com.apple.developer.team-identifier': 'ISIGNTESTS',
      'get-task-allow': true,
      'keychain-access-groups': ['ISIGNTESTS.com.example.app'],
    });
    assert.deepEqual(dropped, []);
    assertEncodable(entitlements);
  });

  test('same team and bundle: the archived Xcode entitlements survive intact', () => {
    const profile = parseProvisioningProfile(readFileSync(sharedFixture(`${APP}/embedded.mobileprovision`)!));
    const original = expectType(parseXmlPlist(readFileSync(sharedFixture(`${APP}/archived-expanded-entitlements.xcent`)!)), 'dict', 'xcent');
    const { entitlements, dropped } = deriveEntitlements({ profile, bundleId: 'org.fastlane.very-capable-app', original });
    assert.deepEqual(dropped, []);
    for (const [key, value] of original.value) assert.ok(plistEqual(entitlements.value.get(key)!, value), key);
    assert.deepEqual(entitlements.value.get('application-identifier'), plistString('TestFixture.org.fastlane.very-capable-app'));
    assert.deepEqual(entitlements.value.get('get-task-allow'), plistBoolean(true));
    assert.equal(entitlements.value.size, original.value.size + 3);
    assertEncodable(entitlements);
  });

  test('same profile, no original: "*" grants that need the app\'s own value are dropped, one iCloud environment chosen', () => {
    const profile = parseProvisioningProfile(readFileSync(sharedFixture(`${APP}/embedded.mobileprovision`)!));
    const { entitlements, dropped } = deriveEntitlements({ profile, bundleId: 'org.fastlane.very-capable-app' });
    assert.deepEqual(dropped.map((d) => d.key).sort(), ['com.apple.developer.associated-domains', 'com.apple.developer.icloud-services']);
    assert.ok(dropped.every((d) => d.reason === 'needs_app_value'));
    // A development profile lists both environments; the app gets Development.
    assert.deepEqual(entitlements.value.get('com.apple.developer.icloud-container-environment'), plistString('Development'));
    assert.deepEqual(entitlements.value.get('com.apple.developer.ubiquity-kvstore-identifier'), plistString('TestFixture.org.fastlane.very-capable-app'));
    assert.deepEqual(entitlements.value.get('keychain-access-groups'), plistArray([plistString('TestFixture.org.fastlane.very-capable-app')]));
    assertEncodable(entitlements);
  });
});

describe('derivation across teams (generated profiles)', () => {
  const pki = testPki();
  const original = expectType(plistFromJs({
    'application-identifier': 'OLDTEAM123.com.old.app',
    'com.apple.developer.team-identifier': 'OLDTEAM123',
    'get-task-allow': true,
    'keychain-access-groups': ['OLDTEAM123.com.old.app', 'OLDTEAM123.com.old.app.shared', 'com.apple.token'],
    'aps-environment': 'development',
    'com.apple.security.application-groups': ['group.com.old'],
    'com.apple.developer.healthkit': true,
  }), 'dict', 'original');

  test('identity re-prefixed, bundle renamed, ungranted keys dropped with reasons', () => {
    const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*', apsEnvironment: 'production', applicationGroups: ['group.com.new'] }));
    const { entitlements, dropped } = deriveEntitlements({ profile, bundleId: 'com.new.app', original });
    assert.deepEqual(plistToJs(entitlements), {
      'application-identifier': 'SGNTEST123.com.new.app',
      'com.apple.developer.team-identifier': 'SGNTEST123',
      'get-task-allow': false,
      'keychain-access-groups': ['SGNTEST123.com.new.app', 'SGNTEST123.com.new.app.shared'],
      'aps-environment': 'production',
    });
    assert.deepEqual(dropped, [
      { key: 'keychain-access-groups', reason: 'value_not_granted' },
      { key: 'com.apple.security.application-groups', reason: 'value_not_granted' },
      { key: 'com.apple.developer.healthkit', reason: 'not_granted' },
    ]);
    assertNoWildcards(entitlements);
    assertEncodable(entitlements);
  });

  test('app groups the new profile lists are kept; push is dropped when the profile lacks it', () => {
    const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.new.*', applicationGroups: ['group.com.old', 'group.other'] }));
    const { entitlements, dropped } = deriveEntitlements({ profile, bundleId: 'com.new.app.widget', original });
    assert.deepEqual(entitlements.value.get('com.apple.security.application-groups'), plistArray([plistString('group.com.old')]));
    assert.ok(!entitlements.value.has('aps-environment'));
    assert.ok(dropped.some((d) => d.key === 'aps-environment' && d.reason === 'not_granted'));
    assert.deepEqual(entitlements.value.get('application-identifier'), plistString('SGNTEST123.com.new.app.widget'));
  });

  test('a bundle outside the profile\'s app id is refused', () => {
    const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.new.app' }));
    assert.throws(() => deriveEntitlements({ profile, bundleId: 'com.new.app.widget' }), (e: unknown) => e instanceof SigningError && e.code === 'bundle_id_mismatch');
  });

  test('distribution profiles choose the Production iCloud environment', () => {
    // Add an icloud-container-environment grant to a generated (enterprise) profile.
    const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*' }));
    profile.entitlements.value.set('com.apple.developer.icloud-container-environment', plistArray([plistString('Development'), plistString('Production')]));
    const { entitlements } = deriveEntitlements({ profile, bundleId: 'a.b' });
    assert.deepEqual(entitlements.value.get('com.apple.developer.icloud-container-environment'), plistString('Production'));
  });
});

describe('grant rules', () => {
  const s = plistString;
  test('wildcards, arrays, booleans, dictionaries', () => {
    assert.ok(grants(s('*'), plistArray([s('applinks:x.com')])));
    assert.ok(grants(s('T.*'), s('T.com.x')));
    assert.ok(!grants(s('T.*'), s('U.com.x')));
    assert.ok(grants(s('T.*'), plistArray([s('T.a'), s('T.b')])));
    assert.ok(grants(plistArray([s('a'), s('b')]), plistArray([s('b')])));
    assert.ok(!grants(plistArray([s('a')]), plistArray([s('a'), s('c')])));
    assert.ok(grants(plistArray([s('Development'), s('Production')]), s('Production')));
    assert.ok(grants(plistArray([]), plistArray([])));
    assert.ok(grants(plistBoolean(true), plistBoolean(false)));
    assert.ok(!grants(plistBoolean(false), plistBoolean(true)));
    assert.ok(!grants(plistBoolean(true), s('yes')));
    assert.ok(grants(plistDict({ a: plistBoolean(true) }), plistDict({ a: plistBoolean(true) })));
    assert.ok(!grants(plistDict({ a: plistBoolean(true) }), plistDict({ b: plistBoolean(true) })));
  });
});
