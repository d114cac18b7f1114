// Signet's APK verifier on the apksig fixtures: apksigner's verdicts where apksigner is right,
// and the two places where Debian's apksigner 31 is known to be wrong (research note §0.3):
// RSA-PSS signatures (it throws on Java 17) and a stripped v3.1 block (it predates v3.1).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, it } from 'node:test';
import { verifyApk, type ApkVerification } from '../../../src/signing/android/index.ts';
import { buildSigningBlock } from '../../../src/signing/android/block/build.ts';
import { V31_BLOCK_ID } from '../../../src/signing/android/block/constants.ts';
import { findSigningBlock } from '../../../src/signing/android/block/parse.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { needsSharedFixtures, testOutputDir } from '../../support/fixtures.ts';
import { apksigFixture, apksigner, needsApksigner, type ApksignerRun } from '../../support/android-signing.ts';

async function verify(file: string | Buffer, minSdk?: number): Promise<ApkVerification> {
  const bytes = typeof file === 'string' ? readFileSync(apksigFixture(file)) : file;
  return verifyApk(new BufferSource(bytes), minSdk === undefined ? {} : { minSdk });
}

describe('verifyApk on apksig fixtures', needsSharedFixtures(), () => {
  it('verifies v1+v2+v3 output and reports each scheme and the signer', async () => {
    const report = await verify('golden/golden-aligned-v1v2v3-out.apk');
    assert.equal(report.verified, true, JSON.stringify(report.errors));
    assert.equal(report.minSdk, 23);
    assert.deepEqual(Object.fromEntries(Object.entries(report.schemes).map(([k, v]) => [k, v.verified])), { v1: true, v2: true, v3: true, 'v3.1': false });
    assert.equal(report.signers[0]?.subject, 'CN=rsa-2048');
    assert.equal(report.signers.find((s) => s.scheme === 'v3')?.minSdk, 24);
  });

  for (const [file, minSdk] of [
    ['signed/v2-only-with-ecdsa-sha256-p256.apk', 24],
    ['signed/v2-only-with-dsa-sha256-2048.apk', 24],
    ['signed/v3-only-with-ecdsa-sha512-p384.apk', 24],
    ['signed/v3-only-with-rsa-pkcs1-sha256-2048.apk', 24],
    ['signed/v1-only-with-signed-attrs.apk', undefined],
    ['signed/v1-only-with-rsa-pkcs1-sha1-1.2.840.113549.1.1.1-2048.apk', undefined],
    ['signed/v1-only-with-ecdsa-sha256-1.2.840.10045.2.1-p256.apk', undefined],
    ['signed/v1-only-two-signers.apk', undefined],
    ['signed/two-signers.apk', undefined],
    ['signed/v1v2v3-with-rsa-2048-lineage-3-signers.apk', undefined],
    ['signed/v3-rsa-2048_2-tgt-dev-release.apk', undefined],
    ['golden/golden-aligned-v1v2v3-lineage-out.apk', undefined],
  ] as const) {
    it(`verifies ${path.basename(file)}${minSdk === undefined ? '' : ` (min SDK ${minSdk})`}`, async () => {
      const report = await verify(file, minSdk);
      assert.equal(report.verified, true, JSON.stringify(report.errors));
    });
  }

  it('reports the proof-of-rotation lineage of a rotated v3 signer', async () => {
    const report = await verify('signed/v1v2v3-with-rsa-2048-lineage-3-signers.apk');
    const v3 = report.signers.find((s) => s.scheme === 'v3');
    assert.equal(v3?.lineage?.length, 3);
    assert.equal(v3?.lineage?.at(-1), v3?.certificateSha256);
  });

  it('a v2/v3-only APK whose manifest says minSdk 23 needs v1 (apksigner: Missing META-INF/MANIFEST.MF)', async () => {
    const report = await verify('signed/v2-only-with-ecdsa-sha256-p256.apk');
    assert.equal(report.verified, false);
    assert.match(report.errors.map((e) => e.message).join('\n'), /Missing META-INF\/MANIFEST\.MF/);
  });

  const negatives: [string, RegExp][] = [
    ['negative/v2-only-cert-and-public-key-mismatch.apk', /public key mismatch/],
    ['negative/v2-only-with-ecdsa-sha256-p256-digest-mismatch.apk', /content digest mismatch/],
    ['negative/v2-only-with-rsa-pkcs1-sha256-2048-sig-does-not-verify.apk', /did not verify/],
    ['negative/v2-stripped.apk', /Scheme v2, but no such signature/],
    ['negative/v2v3-signed-v3-block-stripped.apk', /v3 signature referenced by the v2 signer but not found/],
    ['negative/v2-only-wrong-apk-sig-block-magic.apk', /Missing META-INF\/MANIFEST\.MF|No APK signature/],
  ];
  for (const [file, reason] of negatives) {
    it(`rejects ${path.basename(file)}`, async () => {
      const report = await verify(file, 24);
      assert.equal(report.verified, false);
      assert.match(report.errors.map((e) => e.message).join('\n'), reason);
    });
  }

  it('verifies the v1 signature of original.apk, whose issuer name is encoded unlike its certificate\'s', async () => {
    // The shared CMS verifier matches the issuer as an X.500 name (PrintableString vs UTF8String).
    const report = await verify('golden/original.apk');
    assert.equal(report.verified, true, JSON.stringify(report.errors));
    assert.equal(report.schemes.v1.verified, true);
  });

  it('checks v1 entry digests and v2/v3 content digests in its one pass: one changed byte fails both', async () => {
    const apk = Buffer.from(readFileSync(apksigFixture('golden/golden-aligned-v1v2v3-out.apk')));
    const zip = await ZipReader.open(new BufferSource(apk));
    const stored = zip.entries.find((e) => e.method === 0 && e.compressedSize > 0 && !e.name.startsWith('META-INF/'))!;
    apk[stored.dataOffset] = apk[stored.dataOffset]! ^ 0xff;
    // With a CRC-32 to match (in the local header and the central record), so the zip stays readable.
    const crc = crc32(apk.subarray(stored.dataOffset, stored.dataOffset + stored.compressedSize));
    apk.writeUInt32LE(crc, stored.localHeaderOffset + 14);
    apk.writeUInt32LE(crc, apk.indexOf(stored.centralRecord) + 16);
    const report = await verify(apk);
    assert.equal(report.verified, false);
    const messages = report.errors.map((e) => `${e.scheme}: ${e.message}`).join('\n');
    assert.match(messages, new RegExp(`v1: entry "${stored.name}" does not match its digest`));
    assert.match(messages, /v2: .*content digest mismatch/);
    assert.match(messages, /v3: .*content digest mismatch/);
    // Entry data that no longer inflates to its size and CRC-32 is unreadable input.
    const deflated = zip.entries.find((e) => e.method === 8 && e.compressedSize > 64 && !e.name.startsWith('META-INF/'))!;
    const broken = Buffer.from(readFileSync(apksigFixture('golden/golden-aligned-v1v2v3-out.apk')));
    broken.fill(0x55, deflated.dataOffset + 8, deflated.dataOffset + 40);
    await assert.rejects(verify(broken), (e: unknown) => e instanceof SigningError && e.code === 'zip_invalid' && e.message.includes(deflated.name));
  });

  it('rejects a truncated central directory and an LF in an entry name as unreadable zips', async () => {
    await assert.rejects(verify('negative/v2-only-truncated-cd.apk'), (e: unknown) => e instanceof SigningError && e.code === 'zip_invalid');
    await assert.rejects(verify('negative/v1-only-with-lf-in-entry-name.apk'), (e: unknown) => e instanceof SigningError && e.code === 'zip_unsafe_entry');
  });
});

describe('where apksigner 31 is wrong, Signet is right', needsSharedFixtures(), () => {
  it('verifies RSA-PSS (0x0101) signatures, which apksigner 31 on Java 17 cannot check', async () => {
    const report = await verify('signed/v2-only-with-rsa-pss-sha256-2048.apk', 24);
    assert.equal(report.verified, true, JSON.stringify(report.errors));
    assert.deepEqual(report.signers.find((s) => s.scheme === 'v2')?.algorithms, ['RSA_PSS_WITH_SHA256']);
    if (needsApksigner().skip === false) {
      // apksigner agrees (a Java with RSASSA-PSS), or fails for exactly the known reason; any other
      // verdict (a real signature problem) fails the test.
      const run = await apksigner(['verify', '--min-sdk-version', '24', apksigFixture('signed/v2-only-with-rsa-pss-sha256-2048.apk')]);
      const javaGap = /NoSuchAlgorithmException: SHA256withRSA\/PSS Signature not available/.test(run.stderr);
      assert.ok(run.code === 0 || javaGap, `apksigner exit ${run.code}: ${run.stderr || run.stdout}`);
    }
  });

  it('rejects an APK whose v3.1 block was stripped while v3 still announces rotation (0x559f8b02)', async () => {
    const original = readFileSync(apksigFixture('signed/v31-rsa-2048_2-tgt-33-1-tgt-28.apk'));
    const before = await verify(original);
    assert.equal(before.verified, true, JSON.stringify(before.errors));
    assert.equal(before.schemes['v3.1'].verified, true);
    const stripped = await stripPair(original, V31_BLOCK_ID);
    const report = await verify(stripped);
    assert.equal(report.verified, false);
    assert.match(report.errors.map((e) => e.message).join('\n'), /v3\.1 block is missing/);
    if (needsApksigner().skip === false) {
      const dir = testOutputDir('signing', 'android');
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, 'v31-block-stripped.apk');
      writeFileSync(file, stripped);
      const verdictOf = (out: ApksignerRun) => out.stdout.split('\n').find((line) => line === 'Verifies' || line.startsWith('DOES NOT VERIFY')) ?? out.stderr;
      try {
        // The unstripped original tells whether this apksigner knows v3.1 at all.
        const original = await apksigner(['verify', '--verbose', apksigFixture('signed/v31-rsa-2048_2-tgt-33-1-tgt-28.apk')]);
        assert.equal(verdictOf(original), 'Verifies', original.stdout + original.stderr);
        const knowsV31 = /v3\.1 scheme/i.test(original.stdout);
        const run = await apksigner(['verify', '--verbose', file]);
        // One that knows v3.1 must refuse the strip, as Signet does; apksigner 31 predates v3.1 and
        // must still verify it, which shows the strip left v1/v2/v3 intact (Signet's refusal is
        // about the missing v3.1 block alone).
        assert.equal(run.code === 0 ? 'Verifies' : 'DOES NOT VERIFY', knowsV31 ? 'DOES NOT VERIFY' : 'Verifies', `apksigner: ${verdictOf(run)}`);
      } finally {
        rmSync(file, { force: true });
      }
    }
  });
});

/** Rebuilds the APK Signing Block without one pair; the block start stays, so digests still match. */
async function stripPair(apk: Buffer, id: number): Promise<Buffer> {
  const eocdOffset = apk.length - 22;
  const cdOffset = apk.readUInt32LE(eocdOffset + 16);
  const lookup = await findSigningBlock(new BufferSource(apk), cdOffset);
  assert.ok(lookup.found);
  const block = buildSigningBlock(lookup.block.pairs.filter((p) => p.id !== id && p.id !== 0x42726577));
  const eocd = Buffer.from(apk.subarray(eocdOffset));
  eocd.writeUInt32LE(lookup.block.offset + block.length, 16);
  return Buffer.concat([apk.subarray(0, lookup.block.offset), block, apk.subarray(cdOffset, eocdOffset), eocd]);
}
