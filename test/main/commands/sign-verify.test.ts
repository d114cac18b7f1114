// `signet sign` and `signet verify` through ./bin/signet: apksigner-identical output for the
// apksig golden input, apksigner-style verdicts and exit codes, --json, and one-line errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { apkManifest } from '../../support/app-packages.ts';
import { needsSharedFixtures, repoRoot, testOutputDir } from '../../support/fixtures.ts';
import { apksigFixture, keyFile, needsApksigner } from '../../support/android-signing.ts';
import { testPki } from '../../support/pki.ts';
import { buildZip } from '../../support/zip-builder.ts';

const dir = testOutputDir('main', 'commands', 'sign-verify');

function signet(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(path.join(repoRoot, 'bin/signet'), args, { cwd: repoRoot, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('signet sign / verify (APK)', needsSharedFixtures(), () => {
  mkdirSync(dir, { recursive: true });

  it('signs golden-aligned-in.apk exactly as apksigner does and verifies it', () => {
    const out = path.join(dir, 'signed.apk');
    const signed = signet('sign', apksigFixture('golden/golden-aligned-in.apk'), '-o', out, '--keystore', keyFile('rsa-2048.pk8'), '--cert', keyFile('rsa-2048.x509.pem'));
    assert.equal(signed.status, 0, signed.stderr);
    assert.match(signed.stdout, /^Signed .* \(v1, v2, v3; RSA_PKCS1_V1_5_WITH_SHA256; minSdk 23\)/);
    assert.ok(readFileSync(out).equals(readFileSync(apksigFixture('golden/golden-aligned-v1v2v3-out.apk'))));
    const verified = signet('verify', out);
    assert.equal(verified.status, 0, verified.stdout);
    assert.match(verified.stdout, /^Verifies\n/);
    assert.match(verified.stdout, /Verified using v2 scheme \(APK Signature Scheme v2\): true/);
  });

  it('honours --schemes and --min-sdk', () => {
    const out = path.join(dir, 'v2.apk');
    const signed = signet('sign', apksigFixture('golden/golden-aligned-in.apk'), '-o', out, '--keystore', keyFile('rsa-2048.pk8'), '--cert', keyFile('rsa-2048.x509.pem'), '--schemes', 'v2', '--min-sdk', '24');
    assert.equal(signed.status, 0, signed.stderr);
    assert.ok(readFileSync(out).equals(readFileSync(apksigFixture('golden/golden-aligned-v2-out.apk'))));
    assert.equal(signet('verify', out).status, 1, 'minSdk 23 from the manifest needs v1');
    const json = signet('verify', out, '--json', '--min-sdk', '24');
    assert.equal(json.status, 0);
    const report = JSON.parse(json.stdout);
    assert.equal(report.platform, 'android');
    assert.equal(report.verified, true);
    assert.deepEqual(report.schemes.v2, { present: true, verified: true });
  });

  it('reports DOES NOT VERIFY with the reason and exit status 1', () => {
    const result = signet('verify', apksigFixture('negative/v2-stripped.apk'));
    assert.equal(result.status, 1);
    assert.match(result.stdout, /^DOES NOT VERIFY\n/);
    assert.match(result.stdout, /ERROR \(v1\): .*APK Signature Scheme v2, but no such signature/);
  });

  it('turns bad input into one line with its error code', () => {
    const junk = path.join(dir, 'junk.bin');
    writeFileSync(junk, 'not a package at all');
    const notPackage = signet('verify', junk);
    assert.equal(notPackage.status, 1);
    assert.match(notPackage.stderr, /^signet: .*\(invalid_package\)\n$/);
    const badPassword = signet('sign', apksigFixture('golden/original.apk'), '-o', path.join(dir, 'x.apk'), '--keystore', path.join(repoRoot, '..', 'shared', 'fixtures', 'android', 'keys', 'jks-js', 'keystore', 'RSA_2048_keystore.jks'), '--password', 'wrong');
    assert.equal(badPassword.status, 1);
    assert.match(badPassword.stderr, /\(keystore_password_incorrect\)\n$/);
    const truncated = signet('verify', apksigFixture('negative/v2-only-truncated-cd.apk'));
    assert.match(truncated.stderr, /\(zip_invalid\)\n$/);
    const badSchemes = signet('sign', apksigFixture('golden/original.apk'), '-o', path.join(dir, 'y.apk'), '--keystore', keyFile('rsa-2048.pk8'), '--schemes', 'v9');
    assert.equal(badSchemes.status, 1);
    assert.match(badSchemes.stderr, /v1, v2, v3/);
  });
});

describe('signet sign / verify of an APK whose old signature files are odd (issue #17)', needsApksigner(), () => {
  it('signs it, verifies the output, and apksigner verify agrees', () => {
    mkdirSync(dir, { recursive: true });
    const identity = testPki().androidRsa;
    const key = path.join(dir, 'edge.pk8');
    const cert = path.join(dir, 'edge.x509.pem');
    writeFileSync(key, createPrivateKey(identity.privateKeyPem).export({ type: 'pkcs8', format: 'der' }));
    writeFileSync(cert, identity.certificatePem);
    const input = path.join(dir, 'odd-signature-files.apk');
    writeFileSync(input, buildZip([
      { name: 'META-INF/CERT.RSA', data: 'old block', method: 21, rawData: Buffer.from('method 21 bytes') },
      { name: 'META-INF/CERT.SF', data: 'Signature-Version: 1.0\r\n\r\n', method: 8, localMethod: 0 },
      { name: 'AndroidManifest.xml', data: apkManifest({ minSdk: 21 }), method: 8 },
      { name: 'classes.dex', data: 'dex\n035\0', method: 8 },
    ]).bytes);
    const out = path.join(dir, 'odd-signature-files-signed.apk');
    const signed = signet('sign', input, '-o', out, '--keystore', key, '--cert', cert);
    assert.equal(signed.status, 0, signed.stderr);
    const verified = signet('verify', out);
    assert.equal(verified.status, 0, verified.stdout);
    const oracle = spawnSync('apksigner', ['verify', out], { encoding: 'utf8' });
    assert.equal(oracle.status, 0, oracle.stdout + oracle.stderr);
    // The input itself carries no valid signature: both verifiers say so.
    assert.equal(signet('verify', input).status, 1);
    assert.notEqual(spawnSync('apksigner', ['verify', input], { encoding: 'utf8' }).status, 0);
  });
});
