import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { detectIdentityFormat, loadIdentity, type LoadIdentityOptions } from '../../../src/signing/cms/index.ts';
import { decodePem } from '../../../src/signing/cms/der.ts';
import { SigningError, type SigningErrorCode } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, sharedFixture, testOutputDir } from '../../support/fixtures.ts';
import { certificateToPem, testPki } from '../../support/pki.ts';
import { buildJks } from './jks-build.ts';

const fixture = (rel: string): Buffer => readFileSync(sharedFixture(rel) as string);
const pkcs8 = (key: KeyObject): Buffer => key.export({ format: 'der', type: 'pkcs8' });

async function rejects(promise: Promise<unknown>, code: SigningErrorCode, message?: RegExp): Promise<SigningError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SigningError, `expected SigningError ${code}, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message) assert.match(error.message, message);
    return error;
  }
  assert.fail(`expected ${code}, but it loaded`);
}

describe('loadIdentity: shared keystore fixtures', needsSharedFixtures(), () => {
  // jks-js: every keystore against the key and certificate PEMs exported beside it.
  const jksCases = [
    { file: 'keystore/RSA_2048_keystore.jks', pem: 'pem/RSA_2048_keystore', keyType: 'rsa', options: { password: 'password' } },
    { file: 'keystore/EC_256_keystore.jks', pem: 'pem/EC_256_keystore', keyType: 'ec', options: { password: 'password' } },
    { file: 'java11/keystore/RSA_2048_keystore.jks', pem: 'java11/pem/RSA_2048_keystore', keyType: 'rsa', options: { password: 'password' } },
    { file: 'java11/keystore/EC_256_keystore.jks', pem: 'java11/pem/EC_256_keystore', keyType: 'ec', options: { password: 'password' } },
  ] as const;
  for (const c of jksCases) {
    it(`${c.file} matches its exported key and certificate`, async () => {
      const bytes = fixture(`android/keys/jks-js/${c.file}`);
      assert.equal(detectIdentityFormat(bytes), c.file.startsWith('java11') ? 'pkcs12' : 'jks');
      const identity = await loadIdentity(bytes, c.options);
      assert.equal(identity.keyType, c.keyType);
      assert.equal(identity.alias, 'jks-js');
      const expectedKey = createPrivateKey(fixture(`android/keys/jks-js/${c.pem}.key`).toString());
      assert.deepEqual(pkcs8(identity.privateKey), pkcs8(expectedKey));
      const [expectedCert] = decodePem(fixture(`android/keys/jks-js/${c.pem}.pem`).toString());
      assert.deepEqual(identity.certificate, expectedCert?.der);
      if (c.keyType === 'ec') assert.equal(identity.curve, 'P-256');
    });
  }

  it('diff_pass.jks: separate key password opens the DSA key, which signing refuses', async () => {
    const bytes = fixture('android/keys/jks-js/keystore/diff_pass.jks');
    await rejects(loadIdentity(bytes, { password: 'password1', keyPassword: 'password2' }), 'key_type_unsupported', /dsa/i);
    await rejects(loadIdentity(bytes, { password: 'password1' }), 'key_password_incorrect');
    await rejects(loadIdentity(bytes, { password: 'password2', keyPassword: 'password2' }), 'keystore_password_incorrect');
  });

  it('RSA_2048_truststore.jks has no private key', async () => {
    await rejects(loadIdentity(fixture('android/keys/jks-js/keystore/RSA_2048_truststore.jks'), { password: 'password' }), 'keystore_no_private_key');
  });

  it('JKS: wrong store password and unknown alias', async () => {
    const bytes = fixture('android/keys/jks-js/keystore/RSA_2048_keystore.jks');
    await rejects(loadIdentity(bytes, { password: 'wrong' }), 'keystore_password_incorrect');
    const error = await rejects(loadIdentity(bytes, { password: 'password', alias: 'release' }), 'keystore_alias_not_found', /"jks-js"/);
    assert.deepEqual(error.details?.available, ['jks-js']);
    // JavaKeyStore lower-cases aliases; a user typing the original case still finds it.
    assert.equal((await loadIdentity(bytes, { password: 'password', alias: 'JKS-JS' })).alias, 'jks-js');
  });

  for (const name of ['development', 'distribution']) {
    it(`apple-codesign self-signed-rsa-apple-${name}.p12 (RC2-40 + 3DES) equals its PEM`, async () => {
      const p12 = await loadIdentity(fixture(`ios/identities/apple-codesign/self-signed-rsa-apple-${name}.p12`), { password: 'password' });
      const pem = await loadIdentity(fixture(`ios/identities/apple-codesign/self-signed-rsa-apple-${name}.pem`));
      assert.equal(p12.keyType, 'rsa');
      assert.deepEqual(p12.certificate, pem.certificate);
      assert.deepEqual(pkcs8(p12.privateKey), pkcs8(pem.privateKey));
      await rejects(loadIdentity(fixture(`ios/identities/apple-codesign/self-signed-rsa-apple-${name}.p12`), { password: 'Password' }), 'keystore_password_incorrect');
    });
    it(`apple-codesign self-signed-ed25519-apple-${name} (.p12 and .pem) is refused as a key type`, async () => {
      await rejects(loadIdentity(fixture(`ios/identities/apple-codesign/self-signed-ed25519-apple-${name}.p12`), { password: 'password' }), 'key_type_unsupported', /ed25519/);
      await rejects(loadIdentity(fixture(`ios/identities/apple-codesign/self-signed-ed25519-apple-${name}.pem`)), 'key_type_unsupported', /ed25519/);
    });
  }

  it('apple-codesign-testuser.p12 (Keychain export, MAC iteration 1)', async () => {
    const identity = await loadIdentity(fixture('ios/identities/apple-codesign/apple-codesign-testuser.p12'), { password: 'password123' });
    assert.equal(identity.keyType, 'rsa');
    assert.equal(identity.alias, 'Test User');
    await rejects(loadIdentity(fixture('ios/identities/apple-codesign/apple-codesign-testuser.p12'), { password: 'password' }), 'keystore_password_incorrect');
  });

  it('Apple-issued .cer files alone have no private key', async () => {
    await rejects(loadIdentity(fixture('ios/identities/apple-codesign/apple-signed-apple-development.cer')), 'keystore_no_private_key');
  });

  for (const name of ['rsa-2048', 'rsa-2048_2', 'rsa-2048_3', 'ec-p256', 'ec-p384']) {
    it(`AOSP ${name}.pk8 + .x509.pem`, async () => {
      const identity = await loadIdentity(fixture(`android/keys/apksig/${name}.pk8`), { certificate: fixture(`android/keys/apksig/${name}.x509.pem`) });
      assert.equal(identity.keyType, name.startsWith('ec') ? 'ec' : 'rsa');
      if (name === 'ec-p384') assert.equal(identity.curve, 'P-384');
      assert.deepEqual(identity.certificate, decodePem(fixture(`android/keys/apksig/${name}.x509.pem`).toString())[0]?.der);
      assert.equal(identity.alias, undefined);
    });
  }

  it('AOSP dsa-2048.pk8 is refused for signing; a key with the wrong certificate is a mismatch', async () => {
    await rejects(loadIdentity(fixture('android/keys/apksig/dsa-2048.pk8'), { certificate: fixture('android/keys/apksig/dsa-2048.x509.pem') }), 'key_type_unsupported');
    await rejects(loadIdentity(fixture('android/keys/apksig/rsa-2048.pk8'), { certificate: fixture('android/keys/apksig/rsa-2048_2.x509.pem') }), 'key_certificate_mismatch');
  });

  it('a .pk8 without its certificate asks for one', async () => {
    await rejects(loadIdentity(fixture('android/keys/apksig/rsa-2048.pk8')), 'certificate_invalid', /certificate/);
  });

  it('isign test.key.pem + test.cert.pem (expired cert still loads)', async () => {
    const identity = await loadIdentity(fixture('ios/isign/credentials/test.key.pem'), { certificate: fixture('ios/isign/credentials/test.cert.pem') });
    assert.equal(identity.keyType, 'rsa');
  });
});

describe('loadIdentity: generated identities', () => {
  const pki = testPki();

  for (const legacy of [false, true]) {
    for (const leaf of [pki.leaf, pki.ecLeaf]) {
      it(`${legacy ? 'legacy' : 'modern'} PKCS#12, ${leaf.label}, with chain`, async () => {
        const bytes = pki.p12(leaf, { password: 'sécret', legacy, includeChain: true });
        const identity = await loadIdentity(bytes, { password: 'sécret' });
        assert.deepEqual(identity.certificate, leaf.certificate);
        assert.deepEqual(pkcs8(identity.privateKey), pkcs8(leaf.privateKey));
        assert.equal(identity.alias, leaf.label);
        assert.equal(identity.keyType, leaf.keyType);
        assert.deepEqual(new Set(identity.chain.map((c) => c.toString('hex'))), new Set(leaf.chain.map((c) => c.toString('hex'))));
        await rejects(loadIdentity(bytes, { password: 'secret' }), 'keystore_password_incorrect');
        await rejects(loadIdentity(bytes, { password: 'sécret', alias: 'other' }), 'keystore_alias_not_found', new RegExp(`"${leaf.label}"`));
        assert.equal((await loadIdentity(bytes, { password: 'sécret', alias: leaf.label })).alias, leaf.label);
      });
    }
  }

  it('PKCS#12 with an empty password, modern and legacy', async () => {
    for (const legacy of [false, true]) {
      const identity = await loadIdentity(pki.p12(pki.leaf, { password: '', legacy }));
      assert.deepEqual(identity.certificate, pki.leaf.certificate);
      await rejects(loadIdentity(pki.p12(pki.leaf, { password: '', legacy }), { password: 'x' }), 'keystore_password_incorrect');
    }
  });

  it('PKCS#12 holding only certificates has no private key', async () => {
    const dir = testOutputDir('cms');
    mkdirSync(dir, { recursive: true });
    const certFile = path.join(dir, 'nokeys-cert.pem');
    const out = path.join(dir, 'nokeys.p12');
    writeFileSync(certFile, pki.leaf.certificatePem);
    const result = spawnSync('openssl', ['pkcs12', '-export', '-nokeys', '-in', certFile, '-out', out, '-passout', 'pass:pw']);
    assert.equal(result.status, 0, result.stderr.toString());
    await rejects(loadIdentity(readFileSync(out), { password: 'pw' }), 'keystore_no_private_key');
  });

  it('PEM: PKCS#8, PKCS#1, SEC1, encrypted PKCS#8 and legacy-encrypted PKCS#1, certificate in the same file or given', async () => {
    const certPem = pki.leaf.certificatePem;
    const rsa = pki.leaf.privateKey;
    const ec = pki.ecLeaf.privateKey;
    const variants: Array<[string, string, LoadIdentityOptions, KeyObject]> = [
      ['pkcs8', rsa.export({ format: 'pem', type: 'pkcs8' }).toString() + certPem, {}, rsa],
      ['pkcs1', rsa.export({ format: 'pem', type: 'pkcs1' }).toString() + certPem, {}, rsa],
      ['sec1', ec.export({ format: 'pem', type: 'sec1' }).toString(), { certificate: pki.ecLeaf.certificate }, ec],
      ['encrypted pkcs8', certPem + rsa.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'kp' }).toString(), { keyPassword: 'kp' }, rsa],
      ['legacy encrypted pkcs1', rsa.export({ format: 'pem', type: 'pkcs1', cipher: 'aes-128-cbc', passphrase: 'kp' }).toString() + certPem, { password: 'kp' }, rsa],
    ];
    for (const [label, text, options, key] of variants) {
      const identity = await loadIdentity(Buffer.from(text), options);
      assert.deepEqual(pkcs8(identity.privateKey), pkcs8(key), label);
      assert.equal(detectIdentityFormat(Buffer.from(text)), 'pem');
    }
    const encrypted = Buffer.from(rsa.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'kp' }).toString() + certPem);
    await rejects(loadIdentity(encrypted, { keyPassword: 'nope' }), 'key_password_incorrect');
    await rejects(loadIdentity(encrypted), 'key_password_incorrect', /required/);
    const legacyEncrypted = Buffer.from(rsa.export({ format: 'pem', type: 'pkcs1', cipher: 'aes-128-cbc', passphrase: 'kp' }).toString() + certPem);
    await rejects(loadIdentity(legacyEncrypted, { keyPassword: 'nope' }), 'key_password_incorrect');
    await rejects(loadIdentity(Buffer.from(certPem)), 'keystore_no_private_key');
    await rejects(loadIdentity(Buffer.from(rsa.export({ format: 'pem', type: 'pkcs8' }).toString() + pki.ecLeaf.certificatePem)), 'key_certificate_mismatch');
    // An explicit certificate must be the key's even when the file carries the right one.
    await rejects(loadIdentity(Buffer.from(variants[0]?.[1] as string), { certificate: pki.ecLeaf.certificate }), 'key_certificate_mismatch');
  });

  it('DER PKCS#8 (plain and encrypted) with a PEM or DER certificate', async () => {
    const der = pkcs8(pki.androidEc.privateKey);
    assert.equal(detectIdentityFormat(der), 'pkcs8');
    const fromPem = await loadIdentity(der, { certificate: Buffer.from(pki.androidEc.certificatePem) });
    const fromDer = await loadIdentity(der, { certificate: pki.androidEc.certificate });
    assert.deepEqual(fromPem.certificate, pki.androidEc.certificate);
    assert.deepEqual(fromDer.certificate, pki.androidEc.certificate);
    const encrypted = pki.androidRsa.privateKey.export({ format: 'der', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'kp' });
    assert.equal(detectIdentityFormat(encrypted), 'encrypted-pkcs8');
    const identity = await loadIdentity(encrypted, { password: 'kp', certificate: pki.androidRsa.certificate });
    assert.equal(identity.keyType, 'rsa');
    await rejects(loadIdentity(encrypted, { password: 'bad', certificate: pki.androidRsa.certificate }), 'key_password_incorrect');
  });

  it('JKS with several aliases: choose by alias, list them when ambiguous or unknown', async () => {
    const bytes = buildJks('store', [
      { alias: 'Upload', pkcs8: pkcs8(pki.androidRsa.privateKey), chain: [pki.androidRsa.certificate], keyPassword: 'k1' },
      { alias: 'release', pkcs8: pkcs8(pki.androidEc.privateKey), chain: [pki.androidEc.certificate], keyPassword: 'k2' },
    ], [{ alias: 'ca', certificate: pki.root.certificate }]);
    await rejects(loadIdentity(bytes, { password: 'store' }), 'keystore_alias_not_found', /"upload", "release"/);
    await rejects(loadIdentity(bytes, { password: 'store', alias: 'ca' }), 'keystore_alias_not_found', /"upload", "release"/);
    const upload = await loadIdentity(bytes, { password: 'store', alias: 'Upload', keyPassword: 'k1' });
    assert.equal(upload.alias, 'upload');
    assert.deepEqual(upload.certificate, pki.androidRsa.certificate);
    const release = await loadIdentity(bytes, { password: 'store', alias: 'release', keyPassword: 'k2' });
    assert.equal(release.curve, 'P-256');
    await rejects(loadIdentity(bytes, { password: 'store', alias: 'release', keyPassword: 'k1' }), 'key_password_incorrect');
  });

  it('JKS whose certificate is not the key\'s', async () => {
    const bytes = buildJks('pw', [{ alias: 'x', pkcs8: pkcs8(pki.androidRsa.privateKey), chain: [pki.leaf.certificate], keyPassword: 'pw' }]);
    await rejects(loadIdentity(bytes, { password: 'pw' }), 'key_certificate_mismatch');
  });

  it('JCEKS is refused with conversion advice; unknown bytes are refused', async () => {
    const jceks = Buffer.concat([Buffer.from('cececece00000002', 'hex'), Buffer.alloc(40)]);
    await rejects(loadIdentity(jceks, { password: 'x' }), 'keystore_unsupported', /keytool -importkeystore.*PKCS12/);
    await rejects(loadIdentity(Buffer.from('hello world')), 'keystore_unsupported');
    await rejects(loadIdentity(Buffer.alloc(0)), 'keystore_unsupported');
  });

  it('damaged containers fail with a code, never a crash', async () => {
    const p12 = pki.p12(pki.leaf, { password: 'pw' });
    for (const cut of [10, 100, p12.length - 30]) {
      const error = await loadIdentity(p12.subarray(0, cut), { password: 'pw' }).then(
        () => assert.fail('loaded a truncated file'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof SigningError, String(error));
    }
    const jks = buildJks('pw', [{ alias: 'x', pkcs8: pkcs8(pki.androidRsa.privateKey), chain: [pki.androidRsa.certificate], keyPassword: 'pw' }]);
    // Flipping a byte anywhere breaks the store digest, which reads as a wrong password (as keytool says).
    const flipped = Buffer.from(jks);
    flipped[60] = (flipped[60] as number) ^ 1;
    await rejects(loadIdentity(flipped, { password: 'pw' }), 'keystore_password_incorrect');
  });

  it('unsupported curves are refused', async () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
    await rejects(loadIdentity(Buffer.from(key.export({ format: 'pem', type: 'pkcs8' }).toString() + certificateToPem(pki.leaf.certificate))), 'key_type_unsupported', /secp256k1/);
  });
});
