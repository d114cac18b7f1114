// Bad inputs: each gets its own catalogue error (a SigningError with a stable code), never a
// crash, a hang or a half-written output.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { signApk, verifyApk, type SignApkOptions } from '../../../src/signing/android/index.ts';
import { loadIdentity, type Identity } from '../../../src/signing/cms/index.ts';
import { MemorySink } from '../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { ZipReader, ZipWriter } from '../../../src/signing/zip/index.ts';
import { SigningError, type SigningErrorCode } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { apksigFixture, keyFile, testIdentity } from '../../support/android-signing.ts';

async function sign(input: Buffer, options: Partial<SignApkOptions> & { identity: Identity }): Promise<Buffer> {
  const sink = new MemorySink();
  await signApk(new BufferSource(input), sink, { v1SignerName: 'test', ...options });
  return sink.toBuffer();
}

function rejectsWith(code: SigningErrorCode, pattern?: RegExp): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof SigningError, `expected a SigningError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  };
}

/** golden-aligned-in.apk plus a 3 MiB deflated entry of random bytes at the end. */
async function apkWithLargeDeflatedEntry(): Promise<Buffer> {
  const input = new BufferSource(readFileSync(apksigFixture('golden/golden-aligned-in.apk')));
  const zip = await ZipReader.open(input);
  const sink = new MemorySink();
  const writer = new ZipWriter(sink, { allowZip64: false });
  for (const entry of zip.entriesInFileOrder()) await writer.addRaw(entry, zip);
  const data = randomBytes(3 * 1024 * 1024);
  await writer.addEntry('assets/blob.bin', deflateRawSync(data), { method: 'deflate', precompressed: { crc32: crc32(data) >>> 0, uncompressedSize: data.length } });
  writer.finishEntries();
  await writer.writeTail();
  return sink.toBuffer();
}

/** An empty zip: just the 22-byte end of central directory record (APPNOTE 4.3.16). */
const EMPTY_ZIP = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');

describe('bad APK inputs', needsSharedFixtures(), () => {
  const apk = (): Buffer => readFileSync(apksigFixture('golden/golden-aligned-in.apk'));

  it('not a zip, an empty file, an empty zip, an app bundle', async () => {
    const identity = await testIdentity('rsa-2048');
    await assert.rejects(sign(randomBytes(5000), { identity }), rejectsWith('zip_invalid', /end of central directory/));
    await assert.rejects(sign(Buffer.alloc(0), { identity }), rejectsWith('zip_invalid'));
    await assert.rejects(sign(EMPTY_ZIP, { identity }), rejectsWith('apk_invalid', /Missing AndroidManifest\.xml/));
    const aab = readFileSync(sharedFixture('android/aab/app-release-bundle.aab')!);
    await assert.rejects(sign(aab, { identity }), rejectsWith('apk_invalid', /Missing AndroidManifest\.xml/));
    await assert.rejects(verifyApk(new BufferSource(EMPTY_ZIP)), rejectsWith('apk_invalid'));
  });

  it('a truncated APK', async () => {
    const identity = await testIdentity('rsa-2048');
    const whole = apk();
    await assert.rejects(sign(whole.subarray(0, whole.length - 10), { identity }), rejectsWith('zip_invalid'));
    await assert.rejects(sign(whole.subarray(0, 3000), { identity }), rejectsWith('zip_invalid'));
  });

  it('corrupt deflate data in a digested entry', async () => {
    const identity = await testIdentity('rsa-2048');
    const bytes = apk();
    // temp.txt's 6 deflated bytes start at 2522 in golden-aligned-in.apk.
    bytes.fill(0xff, 2522, 2528);
    await assert.rejects(sign(bytes, { identity, minSdk: 23 }), rejectsWith('zip_invalid', /temp\.txt/));
  });

  it('corrupt deflate data in a large (streamed) entry', async () => {
    const identity = await testIdentity('rsa-2048');
    const bytes = await apkWithLargeDeflatedEntry();
    const ok = await sign(bytes, { identity, minSdk: 23 });
    assert.equal((await verifyApk(new BufferSource(ok), { minSdk: 23 })).verified, true);
    // Garble the middle of the large entry's deflate stream.
    const broken = Buffer.from(bytes);
    broken.fill(0xa5, bytes.length - 1_500_000, bytes.length - 1_400_000);
    await assert.rejects(sign(broken, { identity, minSdk: 23 }), rejectsWith('zip_invalid', /blob\.bin/));
  });

  it('a corrupt binary manifest when minSdk must be read from it', async () => {
    const identity = await testIdentity('rsa-2048');
    const bytes = apk();
    // AndroidManifest.xml is deflated at 252..882; garbling it breaks inflate or the AXML parse.
    bytes.fill(0, 300, 400);
    await assert.rejects(sign(bytes, { identity }), (error: unknown) => error instanceof SigningError && ['zip_invalid', 'manifest_invalid'].includes(error.code));
  });

  it('a key that does not match its certificate', async () => {
    await assert.rejects(
      loadIdentity(readFileSync(keyFile('rsa-2048.pk8')), { certificate: readFileSync(keyFile('rsa-2048_2.x509.pem')) }),
      rejectsWith('key_certificate_mismatch'),
    );
    const right = await testIdentity('rsa-2048');
    const other = await testIdentity('rsa-2048_2');
    await assert.rejects(sign(apk(), { identity: { ...right, certificate: other.certificate } }), rejectsWith('key_certificate_mismatch'));
  });

  it('wrong keystore and key passwords', async () => {
    const jks = readFileSync(sharedFixture('android/keys/jks-js/keystore/RSA_2048_keystore.jks')!);
    await assert.rejects(loadIdentity(jks, { password: 'wrong' }), rejectsWith('keystore_password_incorrect'));
    const diff = readFileSync(sharedFixture('android/keys/jks-js/keystore/diff_pass.jks')!);
    await assert.rejects(loadIdentity(diff, { password: 'password1', keyPassword: 'wrong' }), (e: unknown) => e instanceof SigningError && ['key_password_incorrect', 'key_type_unsupported'].includes(e.code));
    const p12 = readFileSync(sharedFixture('android/keys/jks-js/java11/keystore/RSA_2048_keystore.jks')!);
    await assert.rejects(loadIdentity(p12, { password: 'nope' }), rejectsWith('keystore_password_incorrect'));
  });

  it('key types and SDK levels apksig refuses', async () => {
    const ec = await testIdentity('ec-p256');
    // apksig: ECDSA JAR signatures need API 18.
    await assert.rejects(sign(apk(), { identity: ec, minSdk: 17 }), rejectsWith('key_type_unsupported', /minSdkVersion 18/));
    const ed = generateKeyPairSync('ed25519');
    const rsa = await testIdentity('rsa-2048');
    await assert.rejects(sign(apk(), { identity: { ...rsa, privateKey: ed.privateKey } }), rejectsWith('key_type_unsupported'));
    await assert.rejects(sign(apk(), { identity: rsa, schemes: { v1: false, v2: false, v3: false } }), rejectsWith('apk_invalid', /at least one/));
    await assert.rejects(sign(apk(), { identity: { ...rsa, certificate: Buffer.from('not a certificate') } }), rejectsWith('certificate_invalid'));
  });

  it('an expired certificate signs (Android ignores validity) and is reported', async () => {
    const p12 = readFileSync(sharedFixture('android/keys/jks-js/java11/keystore/RSA_2048_keystore.jks')!);
    const identity = await loadIdentity(p12, { password: 'password' });
    const sink = new MemorySink();
    const result = await signApk(new BufferSource(apk()), sink, { identity, v1SignerName: identity.alias ?? 'jks' });
    assert.equal(result.certificate.expired, true);
    const report = await verifyApk(new BufferSource(sink.toBuffer()));
    assert.equal(report.verified, true, JSON.stringify(report.errors));
    assert.ok(report.warnings.some((w) => /expired/.test(w.message)));
  });

  it('stops when the signal aborts', async () => {
    const identity = await testIdentity('rsa-2048');
    await assert.rejects(sign(apk(), { identity, signal: AbortSignal.abort(new Error('canceled')) }), /canceled/);
  });

  it('never crashes or hangs on truncated or bit-flipped input (200 mutants)', async () => {
    const identity = await testIdentity('rsa-2048');
    const original = readFileSync(apksigFixture('golden/golden-aligned-v1v2v3-out.apk'));
    let seed = 0x5eed;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 200; i++) {
      let mutant: Buffer;
      if (i % 2 === 0) {
        mutant = original.subarray(0, random(original.length));
      } else {
        mutant = Buffer.from(original);
        for (let k = 0; k < 4; k++) {
          const at = random(mutant.length);
          mutant[at] = mutant[at]! ^ (1 << random(8));
        }
      }
      for (const run of [() => sign(mutant, { identity, minSdk: 23 }), () => verifyApk(new BufferSource(mutant), { minSdk: 23 })]) {
        try {
          await run();
        } catch (error) {
          assert.ok(error instanceof SigningError, `mutant ${i}: ${(error as Error).stack}`);
        }
      }
    }
  });
});

describe('damaged signature structures', () => {
  it('a truncated or garbled v3 signing-certificate lineage is apk_signature_invalid', async () => {
    const { parseLineage } = await import('../../../src/signing/android/lineage/lineage.ts');
    for (const bytes of [Buffer.alloc(0), Buffer.from([0, 0, 0, 1]), Buffer.from([0, 0, 0, 1, 0, 0, 0, 40, 1, 2, 3])]) {
      assert.throws(() => parseLineage(bytes), rejectsWith('apk_signature_invalid'));
    }
  });
});
