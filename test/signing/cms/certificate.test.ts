import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { describeCertificate, isExpired } from '../../../src/signing/cms/index.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { openssl, scratchFile } from '../../support/openssl.ts';
import { selfSignedCertificate, testPki } from '../../support/pki.ts';

/** openssl's view of a certificate, as the oracle for names, serial, dates and fingerprints. */
function opensslFacts(der: Buffer): { subject: string; issuer: string; serial: string; sha1: string; sha256: string; notAfter: Date } {
  const file = scratchFile('cert.der', der);
  const out = openssl(['x509', '-inform', 'DER', '-in', file, '-noout', '-subject', '-issuer', '-serial', '-enddate', '-nameopt', 'RFC2253']).stdout.toString();
  const field = (name: string): string => (out.match(new RegExp(`^${name}=(.*)$`, 'm'))?.[1] ?? '').trim();
  const fingerprint = (alg: string): string => openssl(['x509', '-inform', 'DER', '-in', file, '-noout', '-fingerprint', `-${alg}`]).stdout.toString().split('=')[1]?.trim().replace(/:/g, '') ?? '';
  return { subject: field('subject'), issuer: field('issuer'), serial: field('serial'), sha1: fingerprint('sha1'), sha256: fingerprint('sha256'), notAfter: new Date(field('notAfter')) };
}

describe('describeCertificate', () => {
  const pki = testPki();

  it('Apple-style leaf: subject, CN, team id, issuer, key, AIA, against openssl', () => {
    const info = describeCertificate(pki.leaf.certificate);
    const oracle = opensslFacts(pki.leaf.certificate);
    assert.equal(info.subject, oracle.subject);
    assert.equal(info.issuer, oracle.issuer);
    assert.equal(info.serialNumber, oracle.serial);
    assert.equal(info.sha1, oracle.sha1);
    assert.equal(info.sha256, oracle.sha256);
    assert.deepEqual(info.notAfter, oracle.notAfter);
    assert.equal(info.subjectCommonName, 'iPhone Distribution: Signet Test Inc (SGNTEST123)');
    assert.equal(info.teamId, 'SGNTEST123');
    assert.equal(info.organization, 'Signet Test Inc');
    assert.equal(info.issuerCommonName, 'Signet Test WWDR');
    assert.equal(info.keyType, 'rsa');
    assert.equal(info.keySize, 2048);
    assert.equal(info.isCA, false);
    assert.equal(info.selfIssued, false);
    assert.deepEqual(info.caIssuers, ['http://certs.signet.test/wwdrg3.cer']);
    assert.equal(info.authorityKeyId, describeCertificate(pki.intermediate.certificate).subjectKeyId);
  });

  it('EC leaf, CA certificates and self-signed Android certificates', () => {
    const ec = describeCertificate(pki.ecLeaf.certificate);
    assert.equal(ec.keyType, 'ec');
    assert.equal(ec.curve, 'P-256');
    assert.equal(ec.keySize, 256);
    const intermediate = describeCertificate(pki.intermediate.certificate);
    assert.equal(intermediate.isCA, true);
    assert.equal(intermediate.teamId, undefined, 'OU=G3 is not a team id');
    const android = describeCertificate(pki.androidEc.certificate);
    assert.equal(android.selfIssued, true);
    assert.equal(android.subject, android.issuer);
  });

  it('isExpired', () => {
    assert.equal(isExpired(pki.expiredLeaf.certificate), true);
    assert.equal(isExpired(pki.expiredLeaf.certificate, new Date('2020-06-01T00:00:00Z')), false);
    assert.equal(isExpired(pki.expiredLeaf.certificate, new Date('2019-06-01T00:00:00Z')), true, 'not yet valid counts as unusable');
    assert.equal(isExpired(describeCertificate(pki.leaf.certificate), new Date('2030-01-01T00:00:00Z')), false);
  });

  it('RFC 4514 strings escape special characters as openssl does', () => {
    const der = selfSignedCertificate([['C', 'US'], ['O', 'Acme, Inc.'], ['OU', '#1 "team" <dev>; a+b'], ['CN', ' padded\\name ']]);
    const info = describeCertificate(der);
    assert.equal(info.subject, 'CN=\\ padded\\\\name\\ ,OU=\\#1 \\"team\\" \\<dev\\>\\; a\\+b,O=Acme\\, Inc.,C=US');
    assert.equal(info.subject, opensslFacts(der).subject);
    assert.equal(info.subjectCommonName, ' padded\\name ');
  });

  it('serial numbers print as openssl prints them: no DER sign byte, an even number of digits', () => {
    // A7… has its top bit set, so DER stores 00 A7 …; 0A… would lose a digit to a careless trim.
    for (const hex of ['A70A54BDB2D42A', '80', '0A70A54BDB2D42', '01', '7F', '00']) {
      const der = selfSignedCertificate([['CN', `serial ${hex}`]], undefined, Buffer.from(hex, 'hex'));
      assert.equal(describeCertificate(der).serialNumber, opensslFacts(der).serial, hex);
    }
  });

  it('garbage is certificate_invalid', () => {
    for (const bad of [Buffer.alloc(0), Buffer.from('hello'), pki.leaf.certificate.subarray(0, 100), Buffer.from('3000', 'hex')]) {
      assert.throws(() => describeCertificate(bad), (e: unknown) => e instanceof SigningError && e.code === 'certificate_invalid');
    }
  });
});

describe('describeCertificate on real certificates', needsSharedFixtures(), () => {
  it('Apple-issued development certificate', () => {
    const der = readFileSync(sharedFixture('ios/identities/apple-codesign/apple-signed-apple-development.cer') as string);
    const info = describeCertificate(der);
    const oracle = opensslFacts(der);
    assert.equal(info.subject, oracle.subject);
    assert.equal(info.subjectCommonName, 'Apple Development: Gregory Szorc (DD5YMVP48D)');
    assert.equal(info.teamId, 'MK22MZP987');
    assert.equal(info.sha1, oracle.sha1);
    assert.equal(info.serialNumber, oracle.serial);
    assert.deepEqual(info.caIssuers, ['http://certs.apple.com/wwdrg3.der']);
    assert.equal(isExpired(info, new Date('2026-01-01T00:00:00Z')), true);
  });

  it('rcodesign "Ed25519" certificate (its SPKI says X25519): described though no key decodes', () => {
    const pem = readFileSync(sharedFixture('ios/identities/apple-codesign/self-signed-ed25519-apple-development.pem') as string, 'latin1');
    const b64 = pem.split('-----BEGIN CERTIFICATE-----')[1]?.split('-----END CERTIFICATE-----')[0] ?? '';
    const info = describeCertificate(Buffer.from(b64.replace(/\s+/g, ''), 'base64'));
    assert.equal(info.keyType, 'x25519');
    assert.equal(info.keySize, undefined);
  });

  it('every Apple CA certificate parses, and every one is a CA', () => {
    for (const name of ['AppleWWDRCAG3.cer', 'AppleWWDRCAG6.cer', 'AppleRootCA-G3.cer', 'AppleIncRootCertificate.cer', 'DeveloperIDG2CA.cer']) {
      const info = describeCertificate(readFileSync(sharedFixture(`ios/identities/apple-certs/${name}`) as string));
      assert.equal(info.isCA, true, name);
    }
  });
});
