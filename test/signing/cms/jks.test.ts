import assert from 'node:assert/strict';
import { createHash, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readJks, recoverJksKey } from '../../../src/signing/cms/index.ts';
import { decodePem } from '../../../src/signing/cms/der.ts';
import { SigningError, type SigningErrorCode } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { testPki } from '../../support/pki.ts';
import { buildJks } from './jks-build.ts';

const fixture = (rel: string): Buffer => readFileSync(sharedFixture(rel) as string);
const code = (expected: SigningErrorCode) => (e: unknown) => e instanceof SigningError && e.code === expected;

describe('JKS reader on keytool output', needsSharedFixtures(), () => {
  it('diff_pass.jks: DSA key recovered with the key password equals the exported PKCS#8', () => {
    const [entry] = readJks(fixture('android/keys/jks-js/keystore/diff_pass.jks'), 'password1');
    assert.ok(entry);
    assert.equal(entry.kind, 'key');
    assert.equal(entry.alias, 'jks-js');
    const pkcs8 = recoverJksKey(entry, 'password2');
    const expected = createPrivateKey(fixture('android/keys/jks-js/pem/diff_pass.key').toString()).export({ format: 'der', type: 'pkcs8' });
    assert.deepEqual(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ format: 'der', type: 'pkcs8' }), expected);
    assert.deepEqual(entry.certificates[0], decodePem(fixture('android/keys/jks-js/pem/diff_pass.pem').toString())[0]?.der);
    assert.throws(() => recoverJksKey(entry, 'password1'), code('key_password_incorrect'));
  });

  it('truststore: one trusted certificate entry, no key', () => {
    const entries = readJks(fixture('android/keys/jks-js/keystore/RSA_2048_truststore.jks'), 'password');
    assert.deepEqual(entries.map((e) => e.kind), ['trusted']);
    assert.throws(() => recoverJksKey(entries[0]!, 'password'), code('keystore_no_private_key'));
  });

  it('timestamps are read as dates', () => {
    const [entry] = readJks(fixture('android/keys/jks-js/keystore/RSA_2048_keystore.jks'), 'password');
    assert.ok(entry && entry.created.getUTCFullYear() >= 2019 && entry.created.getUTCFullYear() < 2030);
  });
});

describe('JKS reader: round trip and damage', () => {
  const pki = testPki();
  const pkcs8 = pki.androidRsa.privateKey.export({ format: 'der', type: 'pkcs8' });

  it('reads back what the OpenJDK-style writer wrote, with non-ASCII aliases and passwords', () => {
    const bytes = buildJks('störe-пароль', [{ alias: 'Clé', pkcs8, chain: [pki.androidRsa.certificate, pki.root.certificate], keyPassword: 'kéy' }], [{ alias: 'root', certificate: pki.root.certificate }]);
    const entries = readJks(bytes, 'störe-пароль');
    assert.deepEqual(entries.map((e) => [e.alias, e.kind]), [['clé', 'key'], ['root', 'trusted']]);
    assert.deepEqual(entries[0]?.certificates, [pki.androidRsa.certificate, pki.root.certificate]);
    assert.deepEqual(recoverJksKey(entries[0]!, 'kéy'), pkcs8);
    assert.throws(() => readJks(bytes, 'store'), code('keystore_password_incorrect'));
  });

  it('structural damage behind a valid digest is keystore_invalid, never a crash', () => {
    const good = buildJks('pw', [{ alias: 'a', pkcs8, chain: [pki.androidRsa.certificate], keyPassword: 'pw' }]);
    const resign = (body: Buffer): Buffer => {
      // Recompute the trailer so the damage reaches the parser.
      const mac = createHash('sha1').update(Buffer.from('pw', 'utf16le').swap16()).update('Mighty Aphrodite').update(body).digest();
      return Buffer.concat([body, mac]);
    };
    const body = good.subarray(0, good.length - 20);
    const badCount = Buffer.from(body);
    badCount.writeUInt32BE(5, 8);
    assert.throws(() => readJks(resign(badCount), 'pw'), code('keystore_invalid'));
    const badTag = Buffer.from(body);
    badTag.writeUInt32BE(9, 12);
    assert.throws(() => readJks(resign(badTag), 'pw'), code('keystore_invalid'));
    const badVersion = Buffer.from(body);
    badVersion.writeUInt32BE(7, 4);
    assert.throws(() => readJks(resign(badVersion), 'pw'), code('keystore_unsupported'));
    assert.throws(() => readJks(resign(Buffer.concat([body, Buffer.from([1])])), 'pw'), code('keystore_invalid'));
    assert.throws(() => readJks(Buffer.alloc(10), 'pw'), code('keystore_invalid'));
  });
});
