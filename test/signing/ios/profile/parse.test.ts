// .mobileprovision parsing (real Apple-signed and third-party profiles, generated ones) and the
// pre-signing checks with their error codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SigningError, type SigningErrorCode } from '../../../../src/signing/errors.ts';
import {
  checkProfileForSigning,
  parseProvisioningProfile,
  selectProfileForBundle,
  type ProvisioningProfile,
} from '../../../../src/signing/ios/profile/index.ts';
import { parsePlist, plistEqual } from '../../../../src/signing/plist/index.ts';
import { needsSharedFixtures, sharedFixture, testOutputDir } from '../../../support/fixtures.ts';
import { testPki } from '../../../support/pki.ts';

const fixture = (rel: string) => readFileSync(sharedFixture(`ios/${rel}`)!);
// The isign PEM starts with openssl "Bag Attributes" text; X509Certificate reads past it.
const pemToDer = (pem: string) => new X509Certificate(pem).raw;

function throwsCode(fn: () => unknown, code: SigningErrorCode, pattern?: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof SigningError && error.code === code && (pattern === undefined || pattern.test(error.message)));
}

/** CMS-signs arbitrary content with the test intermediate, as openssl would wrap a profile. */
function signContent(content: string | Buffer, name: string): Buffer {
  const pki = testPki();
  const dir = testOutputDir('profile-parse');
  mkdirSync(dir, { recursive: true });
  const files = { in: path.join(dir, `${name}.plist`), out: path.join(dir, `${name}.mobileprovision`), cert: path.join(dir, 'signer.pem'), key: path.join(dir, 'signer-key.pem') };
  writeFileSync(files.in, content);
  writeFileSync(files.cert, pki.intermediate.certificatePem);
  writeFileSync(files.key, pki.intermediate.privateKeyPem);
  const run = spawnSync('openssl', ['cms', '-sign', '-binary', '-nodetach', '-outform', 'DER', '-in', files.in, '-out', files.out, '-signer', files.cert, '-inkey', files.key]);
  assert.equal(run.status, 0, run.stderr.toString());
  return readFileSync(files.out);
}

describe('third-party profiles', needsSharedFixtures(), () => {
  test('isign test profile: wildcard development profile signed by its own test certificate', () => {
    const profile = parseProvisioningProfile(fixture('isign/credentials/test.mobileprovision'));
    assert.equal(profile.type, 'development');
    assert.equal(profile.name, 'RDC-Dev');
    assert.equal(profile.uuid, 'f4d8aa37-45a7-4304-960c-1291e1a5a0f3');
    assert.equal(profile.teamId, 'ISIGNTESTS');
    assert.equal(profile.teamName, 'ISIGN OPEN SOURCE');
    assert.equal(profile.appIdPrefix, 'ISIGNTESTS');
    assert.equal(profile.applicationIdentifier, 'ISIGNTESTS.*');
    assert.equal(profile.bundleIdPattern, '*');
    assert.deepEqual(profile.devices, ['e2cd3a02c1a3f69a5ff05bce3ea1b1092b30efe0', '0a0fd3dcb248d3c001a586e8f638800e18c54efc']);
    assert.equal(profile.provisionsAllDevices, false);
    assert.deepEqual(profile.platforms, ['iOS']);
    assert.equal(profile.createdAt.toISOString(), '2016-11-28T22:57:49.000Z');
    assert.equal(profile.expiresAt.toISOString(), '2017-11-28T22:57:49.000Z');
    const cert = pemToDer(fixture('isign/credentials/test.cert.pem').toString());
    assert.equal(profile.developerCertificates.length, 1);
    assert.ok(profile.developerCertificates[0]!.equals(cert));
    assert.equal(profile.signerCertificates.length, 1);
    assert.ok(profile.signerCertificates[0]!.equals(cert));
    assert.equal(profile.signatureVerified, false);
    // The CMS content is the plist isign ships next to the profile.
    assert.ok(plistEqual(profile.plist, parsePlist(fixture('isign/credentials/test.mobileprovision.plist')).value));
    assert.ok(profile.bytes.equals(fixture('isign/credentials/test.mobileprovision')));
  });

  test('fastlane App Store profiles: Apple-signed, exact app id, no devices', () => {
    for (const name of ['test.mobileprovision', 'AppStore_tools.fastlane.app.mobileprovision']) {
      const profile = parseProvisioningProfile(fixture(`fastlane/profiles/${name}`));
      assert.equal(profile.type, 'app-store', name);
      assert.equal(profile.teamId, '439BBM9367');
      assert.equal(profile.bundleIdPattern, 'tools.fastlane.app');
      assert.deepEqual(profile.devices, []);
      assert.equal(profile.cmsCertificates.length, 3);
      assert.equal(profile.signerCertificates.length, 1);
      assert.match(new X509Certificate(profile.signerCertificates[0]!).subject, /CN=Apple iPhone OS Provisioning Profile Signing/);
    }
  });

  test('very-capable-app embedded profile: development, one device, rich entitlements', () => {
    const profile = parseProvisioningProfile(fixture('fastlane/very-capable-app.xcarchive/Products/Applications/very-capable-app.app/embedded.mobileprovision'));
    assert.equal(profile.type, 'development');
    assert.equal(profile.applicationIdentifier, 'TestFixture.org.fastlane.very-capable-app');
    assert.deepEqual(profile.devices, ['1234567890123456789012345678901234567890']);
    assert.ok(profile.entitlements.value.size > 20);
  });

  test('checks against the isign profile and certificate', () => {
    const profile = parseProvisioningProfile(fixture('isign/credentials/test.mobileprovision'));
    const certificate = pemToDer(fixture('isign/credentials/test.cert.pem').toString());
    const now = new Date('2017-06-01T00:00:00Z');
    checkProfileForSigning(profile, { bundleId: 'com.example.anything', certificate, now });
    throwsCode(() => checkProfileForSigning(profile, { bundleId: 'com.example.app', certificate, now: new Date('2018-01-01T00:00:00Z') }), 'profile_expired', /2017-11-28/);
    throwsCode(() => checkProfileForSigning(profile, { bundleId: 'com.example.app', certificate: testPki().leaf.certificate, now }), 'profile_certificate_mismatch');
    const fastlane = parseProvisioningProfile(fixture('fastlane/profiles/test.mobileprovision'));
    throwsCode(() => checkProfileForSigning(fastlane, { bundleId: 'tools.fastlane.other', certificate, now }), 'bundle_id_mismatch', /tools\.fastlane\.other/);
  });
});

describe('generated profiles', () => {
  const pki = testPki();
  const now = new Date();

  test('profile types: enterprise, ad-hoc, development', () => {
    assert.equal(parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.signet.app' })).type, 'enterprise');
    const adHoc = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.signet.app', devices: ['00008030-001A2B3C4D5E6F70'] }));
    assert.equal(adHoc.type, 'ad-hoc');
    assert.deepEqual(adHoc.devices, ['00008030-001A2B3C4D5E6F70']);
    assert.equal(parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.signet.app', devices: ['x'], getTaskAllow: true })).type, 'development');
  });

  test('the signature hook sees the signer certificate; its verdict is reported or propagated', () => {
    const bytes = pki.mobileprovision({ bundleId: 'com.signet.app' });
    let seen: Buffer[] = [];
    const profile = parseProvisioningProfile(bytes, { verifyProfileSignature: (cms) => { seen = cms.signerCertificates; } });
    assert.equal(profile.signatureVerified, true);
    assert.equal(seen.length, 1);
    assert.ok(seen[0]!.equals(pki.intermediate.certificate));
    throwsCode(() => parseProvisioningProfile(bytes, { verifyProfileSignature: () => { throw new SigningError('cms_invalid', 'bad signature'); } }), 'cms_invalid');
  });

  test('every check has its own code', () => {
    const certificate = pki.leaf.certificate;
    const wildcard = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.signet.*' }));
    checkProfileForSigning(wildcard, { bundleId: 'com.signet.app.widget', certificate, now });
    throwsCode(() => checkProfileForSigning(wildcard, { bundleId: 'com.signet', certificate, now }), 'bundle_id_mismatch');
    throwsCode(() => checkProfileForSigning(wildcard, { bundleId: 'org.other.app', certificate, now }), 'bundle_id_mismatch');
    const expired = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*', createdAt: new Date('2020-01-01T00:00:00Z'), expiresAt: new Date('2021-01-01T00:00:00Z') }));
    throwsCode(() => checkProfileForSigning(expired, { bundleId: 'a.b', certificate, now }), 'profile_expired');
    throwsCode(() => checkProfileForSigning(wildcard, { bundleId: 'com.signet.app', certificate: pki.ecLeaf.certificate, now }), 'profile_certificate_mismatch');
    const forExpiredCert = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*', certificate: pki.expiredLeaf.certificate }));
    throwsCode(() => checkProfileForSigning(forExpiredCert, { bundleId: 'a.b', certificate: pki.expiredLeaf.certificate, now }), 'certificate_expired', /2021-01-01/);
  });

  test('per-bundle selection prefers the exact app id, then the longest wildcard', () => {
    const make = (bundleId: string) => parseProvisioningProfile(pki.mobileprovision({ bundleId }));
    const profiles: ProvisioningProfile[] = [make('*'), make('com.signet.*'), make('com.signet.app'), make('com.signet.app.widget')];
    const pick = (id: string) => selectProfileForBundle(profiles, id)?.bundleIdPattern;
    assert.equal(pick('com.signet.app'), 'com.signet.app');
    assert.equal(pick('com.signet.app.widget'), 'com.signet.app.widget');
    assert.equal(pick('com.signet.app.intents'), 'com.signet.*');
    assert.equal(pick('org.example'), '*');
    assert.equal(selectProfileForBundle(profiles.slice(1, 3), 'org.example'), undefined);
  });

  test('malformed profiles are refused with profile_invalid', () => {
    throwsCode(() => parseProvisioningProfile(Buffer.from('not a profile')), 'profile_invalid', /CMS/);
    throwsCode(() => parseProvisioningProfile(signContent('hello', 'not-plist')), 'profile_invalid', /plist/);
    const plist = pki.profilePlist({ bundleId: 'com.signet.app' });
    const without = (key: string) => plist.replace(new RegExp(`\\t<key>${key}</key>\\n\\t<(array|dict)>[\\s\\S]*?\\n\\t</\\1>\\n`), '');
    throwsCode(() => parseProvisioningProfile(signContent(without('Entitlements'), 'no-ents')), 'profile_invalid', /Entitlements is missing/);
    throwsCode(() => parseProvisioningProfile(signContent(without('DeveloperCertificates'), 'no-certs')), 'profile_invalid', /DeveloperCertificates is missing/);
    throwsCode(() => parseProvisioningProfile(signContent(plist.replace('<string>SGNTEST123.com.signet.app</string>', '<string>OTHER.com.signet.app</string>'), 'bad-prefix')), 'profile_invalid', /prefix/);
    throwsCode(() => parseProvisioningProfile(signContent('<plist><array/></plist>', 'array-root')), 'profile_invalid', /is an array, expected a dict/);
  });
});
