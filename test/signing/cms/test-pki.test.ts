// The shared test PKI (test/support/pki.ts) is itself checked against openssl, so every suite
// that leans on it leans on something verified.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePlist, plistToJs } from '../../../src/signing/plist/index.ts';
import { verifySignedData } from '../../../src/signing/cms/index.ts';
import { openssl, scratchFile } from '../../support/openssl.ts';
import { testPki } from '../../support/pki.ts';

describe('test PKI', () => {
  const pki = testPki();

  it('is cached per process', () => {
    assert.equal(testPki(), pki);
  });

  it('openssl verifies every leaf against root + intermediate, and the expired one as expired', () => {
    const ca = scratchFile('ca.pem', pki.root.certificatePem + pki.intermediate.certificatePem);
    for (const leaf of [pki.leaf, pki.ecLeaf]) {
      const result = openssl(['verify', '-CAfile', ca, scratchFile('leaf.pem', leaf.certificatePem)]);
      assert.equal(result.status, 0, result.stderr);
    }
    const expired = openssl(['verify', '-CAfile', ca, scratchFile('expired.pem', pki.expiredLeaf.certificatePem)]);
    assert.notEqual(expired.status, 0);
    assert.match(expired.stdout.toString() + expired.stderr, /expired/);
    const selfSigned = openssl(['verify', '-CAfile', scratchFile('self.pem', pki.androidEc.certificatePem), scratchFile('self2.pem', pki.androidEc.certificatePem)]);
    assert.equal(selfSigned.status, 0, selfSigned.stderr);
  });

  it('PKCS#12: modern is PBES2/AES-256 with a SHA-256 MAC, legacy is RC2-40 + 3DES with a SHA-1 MAC', () => {
    const modern = openssl(['pkcs12', '-info', '-noout', '-in', scratchFile('m.p12', pki.p12(pki.leaf, { password: 'pw' })), '-passin', 'pass:pw']);
    assert.equal(modern.status, 0, modern.stderr);
    assert.match(modern.stderr, /MAC: sha256/);
    assert.match(modern.stderr, /AES-256-CBC/);
    const legacy = openssl(['pkcs12', '-info', '-noout', '-legacy', '-in', scratchFile('l.p12', pki.p12(pki.leaf, { password: 'pw', legacy: true })), '-passin', 'pass:pw']);
    assert.equal(legacy.status, 0, legacy.stderr);
    assert.match(legacy.stderr, /MAC: sha1/);
    assert.match(legacy.stderr, /pbeWithSHA1And40BitRC2-CBC/);
    assert.match(legacy.stderr, /pbeWithSHA1And3-KeyTripleDES-CBC/);
  });

  it('mobileprovision: CMS signed by the intermediate with an Apple-shaped plist', () => {
    const udid = '00008030-001A2B3C4D5E6F70';
    const expiresAt = new Date('2030-01-01T00:00:00Z');
    const profile = pki.mobileprovision({ bundleId: 'com.signet.demo', devices: [udid], expiresAt, apsEnvironment: 'production', applicationGroups: ['group.com.signet.demo'] });
    const oracle = openssl(['cms', '-verify', '-inform', 'DER', '-in', scratchFile('p.mobileprovision', profile), '-CAfile', scratchFile('root.pem', pki.root.certificatePem), '-purpose', 'any']);
    assert.equal(oracle.status, 0, oracle.stderr);
    const verified = verifySignedData(profile, { trustedRoots: [pki.root.certificate] });
    assert.equal(verified.chain?.trusted, true);
    assert.deepEqual(verified.signerCertificate, pki.intermediate.certificate);
    const plist = plistToJs(parsePlist(verified.content).value) as Record<string, unknown>;
    assert.deepEqual(plist.TeamIdentifier, ['SGNTEST123']);
    assert.deepEqual(plist.ApplicationIdentifierPrefix, ['SGNTEST123']);
    assert.deepEqual(plist.ProvisionedDevices, [udid]);
    assert.equal(plist.ProvisionsAllDevices, undefined);
    assert.deepEqual(plist.ExpirationDate, expiresAt);
    assert.equal(Number(plist.Version), 1);
    const certificates = plist.DeveloperCertificates as Uint8Array[];
    assert.deepEqual(Buffer.from(certificates[0] as Uint8Array), pki.leaf.certificate);
    const entitlements = plist.Entitlements as Record<string, unknown>;
    assert.equal(entitlements['application-identifier'], 'SGNTEST123.com.signet.demo');
    assert.equal(entitlements['com.apple.developer.team-identifier'], 'SGNTEST123');
    assert.equal(entitlements['aps-environment'], 'production');
    assert.deepEqual(entitlements['com.apple.security.application-groups'], ['group.com.signet.demo']);
    assert.equal(entitlements['get-task-allow'], false);
  });

  it('mobileprovision: enterprise wildcard profile for another certificate', () => {
    const profile = pki.mobileprovision({ bundleId: '*', certificate: pki.ecLeaf.certificate, getTaskAllow: true });
    const plist = plistToJs(parsePlist(verifySignedData(profile).content).value) as Record<string, unknown>;
    assert.equal(plist.ProvisionsAllDevices, true);
    assert.equal((plist.Entitlements as Record<string, unknown>)['application-identifier'], 'SGNTEST123.*');
    assert.deepEqual(Buffer.from((plist.DeveloperCertificates as Uint8Array[])[0] as Uint8Array), pki.ecLeaf.certificate);
  });
});
