// EnterpriseSigner('android'), the service's Signer for (android, enterprise): keystore credential in, signed
// and verified APK out; every failure carries a catalogue code for task.error.code.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/errors.ts';
import { verifyApk } from '../../../src/signing/android/index.ts';
import { BufferSource, FileSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { EnterpriseSigner } from '../../../src/services/signers/enterprise.ts';
import type { Credential } from '../../../src/db/credential.ts';
import type { SignRequest } from '../../../src/services/signer.ts';
import { needsSharedFixtures, sharedFixture, testOutputDir } from '../../support/fixtures.ts';
import { apksigFixture, keyFile } from '../../support/android-signing.ts';

const dir = testOutputDir('tasks', 'signers', 'android');

function request(credential: Credential, output: string, input = apksigFixture('golden/original.apk')): SignRequest {
  return { taskId: 'tsk_test', platform: 'android', certType: 'enterprise', input: new BufferSource(readFileSync(input)), outputPath: output, credential, signal: new AbortController().signal };
}

function keystore(file: string, password: string | null, alias: string | null = null): Credential {
  return { kind: 'android', keystore: readFileSync(sharedFixture(file)!), certificate: null, password, keyPassword: null, alias };
}

describe('EnterpriseSigner for Android', needsSharedFixtures(), () => {
  mkdirSync(dir, { recursive: true });
  const signer = new EnterpriseSigner('android');

  it('signs v1+v2+v3 with a PKCS#12 keystore, verifies, and reports the app and the expired certificate', async () => {
    const output = path.join(dir, 'p12.apk');
    const result = await signer.sign(request(keystore('android/keys/jks-js/java11/keystore/RSA_2048_keystore.jks', 'password'), output));
    assert.deepEqual(result.app, { bundleId: 'android.appsecurity.cts.tinyapp', name: 'Tiny App for CTS', version: '1.0', build: '10' });
    assert.deepEqual(result.verification.slice(0, 3), ['v1', 'v2', 'v3']);
    assert.match(result.verification[3] ?? '', /certificate expired on \d{4}-\d\d-\d\d/);
    const source = await FileSource.open(output);
    const report = await verifyApk(source).finally(() => source.close());
    assert.equal(report.verified, true);
    // apksigner: the keystore alias names the v1 files.
    assert.ok(report.signers.some((s) => s.scheme === 'v1' && s.name === 'JKS-JS'));
  });

  it('signs with a JKS keystore and with a PK8 key plus certificate', async () => {
    const jks = await signer.sign(request(keystore('android/keys/jks-js/keystore/EC_256_keystore.jks', 'password'), path.join(dir, 'jks-ec.apk')));
    assert.ok(jks.verification.includes('v2'));
    const pk8: Credential = { kind: 'android', keystore: readFileSync(keyFile('rsa-2048.pk8')), certificate: readFileSync(keyFile('rsa-2048.x509.pem')), password: null, keyPassword: null, alias: null };
    const output = path.join(dir, 'pk8.apk');
    await signer.sign(request(pk8, output));
    const source = await FileSource.open(output);
    const report = await verifyApk(source).finally(() => source.close());
    // No alias and no file name reach the service, so the v1 files are META-INF/CERT.*.
    assert.ok(report.verified && report.signers.some((s) => s.scheme === 'v1' && s.name === 'CERT'));
  });

  it('maps failures to catalogue codes and leaves no output behind', async () => {
    const output = path.join(dir, 'failed.apk');
    await assert.rejects(
      signer.sign(request(keystore('android/keys/jks-js/keystore/RSA_2048_keystore.jks', 'wrong'), output)),
      (e: unknown) => e instanceof SigningError && e.code === 'keystore_password_incorrect',
    );
    await assert.rejects(
      signer.sign(request(keystore('android/keys/jks-js/keystore/RSA_2048_truststore.jks', 'password'), output)),
      (e: unknown) => e instanceof SigningError && e.code === 'keystore_no_private_key',
    );
    await assert.rejects(
      signer.sign(request(keystore('android/keys/jks-js/java11/keystore/RSA_2048_keystore.jks', 'password'), output, sharedFixture('android/aab/sample.aab')!)),
      (e: unknown) => e instanceof SigningError && e.code === 'apk_invalid',
    );
    assert.equal(existsSync(output), false);
    const ios: Credential = { kind: 'ios_enterprise', p12: Buffer.alloc(0), password: '', profiles: [] };
    await assert.rejects(signer.sign(request(ios, output)), (e: unknown) => e instanceof AppError && e.code === 'cert_type_unsupported');
    rmSync(output, { force: true });
  });
});
