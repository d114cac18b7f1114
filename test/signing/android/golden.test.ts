// Byte-for-byte equality with AOSP apksig's golden outputs (which Debian's apksigner reproduces):
// same key (rsa-2048), same schemes, same alignment, same bytes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { verifyApk, type ApkSchemes } from '../../../src/signing/android/index.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { needsSharedFixtures } from '../../support/fixtures.ts';
import { apksigFixture, keyFile, signBuffer, testIdentity } from '../../support/android-signing.ts';

const ALL: ApkSchemes = { v1: true, v2: true, v3: true };
const cases: { input: string; golden: string; schemes: ApkSchemes; minSdk?: number }[] = [
  { input: 'golden-aligned-in.apk', golden: 'golden-aligned-v1v2v3-out.apk', schemes: ALL },
  { input: 'golden-aligned-in.apk', golden: 'golden-aligned-v1-out.apk', schemes: { v1: true, v2: false, v3: false } },
  { input: 'golden-aligned-in.apk', golden: 'golden-aligned-v2-out.apk', schemes: { v1: false, v2: true, v3: false } },
  { input: 'golden-aligned-in.apk', golden: 'golden-aligned-v3-out.apk', schemes: { v1: false, v2: false, v3: true } },
  { input: 'golden-unaligned-in.apk', golden: 'golden-unaligned-v1v2v3-out.apk', schemes: ALL },
  { input: 'golden-unaligned-in.apk', golden: 'golden-unaligned-v1-out.apk', schemes: { v1: true, v2: false, v3: false } },
  { input: 'golden-unaligned-in.apk', golden: 'golden-unaligned-v2-out.apk', schemes: { v1: false, v2: true, v3: false } },
  { input: 'golden-unaligned-in.apk', golden: 'golden-unaligned-v3-out.apk', schemes: { v1: false, v2: false, v3: true } },
  // original.apk is already v1+v2 signed: the old signature is dropped and replaced.
  { input: 'original.apk', golden: 'golden-rsa-out.apk', schemes: ALL },
  { input: 'original.apk', golden: 'golden-rsa-minSdkVersion-1-out.apk', schemes: ALL, minSdk: 1 },
  { input: 'original.apk', golden: 'golden-rsa-minSdkVersion-18-out.apk', schemes: ALL, minSdk: 18 },
  { input: 'original.apk', golden: 'golden-rsa-minSdkVersion-24-out.apk', schemes: ALL, minSdk: 24 },
];

describe('signApk reproduces the apksig golden outputs byte for byte', needsSharedFixtures(), () => {
  for (const c of cases) {
    it(`${c.input} -> ${c.golden}`, async () => {
      const identity = await testIdentity('rsa-2048');
      const { output, result } = await signBuffer(readFileSync(apksigFixture(`golden/${c.input}`)), {
        identity,
        v1SignerName: 'rsa-2048',
        schemes: c.schemes,
        ...(c.minSdk === undefined ? {} : { minSdk: c.minSdk }),
      });
      const golden = readFileSync(apksigFixture(`golden/${c.golden}`));
      if (!output.equals(golden)) {
        let first = 0;
        while (first < Math.min(output.length, golden.length) && output[first] === golden[first]) first++;
        assert.fail(`output differs from ${c.golden} at byte ${first} (lengths ${output.length} / ${golden.length})`);
      }
      assert.equal(result.outputSize, golden.length);
      if (c.schemes.v1) assert.equal(result.v1Digest, (c.minSdk ?? 23) < 18 ? 'sha1' : 'sha256');
    });
  }
});

describe('key rotation', needsSharedFixtures(), () => {
  const lineageFile = (): Buffer => readFileSync(keyFile('rsa-2048-lineage-2-signers'));

  it('rotation at SDK 28 reproduces golden-aligned-v1v2v3-lineage-out.apk (apksig 34) byte for byte', async () => {
    const { output } = await signBuffer(readFileSync(apksigFixture('golden/golden-aligned-in.apk')), {
      identity: await testIdentity('rsa-2048_2'),
      v1SignerName: 'rsa-2048',
      rotation: { previous: await testIdentity('rsa-2048'), lineageFile: lineageFile(), minSdk: 28 },
    });
    assert.ok(output.equals(readFileSync(apksigFixture('golden/golden-aligned-v1v2v3-lineage-out.apk'))));
  });

  it('rotation at SDK 33 writes v3.1 for the new key and v3 for the old one, and verifies', async () => {
    const { output } = await signBuffer(readFileSync(apksigFixture('golden/golden-aligned-in.apk')), {
      identity: await testIdentity('rsa-2048_2'),
      v1SignerName: 'rsa-2048',
      rotation: { previous: await testIdentity('rsa-2048'), lineageFile: lineageFile() },
    });
    const report = await verifyApk(new BufferSource(output));
    assert.equal(report.verified, true, JSON.stringify(report.errors));
    assert.equal(report.schemes['v3.1'].verified, true);
    const v3 = report.signers.find((s) => s.scheme === 'v3')!;
    const v31 = report.signers.find((s) => s.scheme === 'v3.1')!;
    assert.deepEqual([v3.subject, v3.minSdk, v3.maxSdk], ['CN=rsa-2048', 24, 32]);
    assert.deepEqual([v31.subject, v31.minSdk, v31.lineage?.length], ['CN=rsa-2048_2', 33, 2]);
  });

  it('refuses a lineage that does not lead to the signing key', async () => {
    await assert.rejects(
      signBuffer(readFileSync(apksigFixture('golden/golden-aligned-in.apk')), {
        identity: await testIdentity('rsa-2048'),
        v1SignerName: 'rsa-2048',
        rotation: { previous: await testIdentity('rsa-2048_2'), lineageFile: lineageFile() },
      }),
      (e: unknown) => e instanceof SigningError && e.code === 'key_certificate_mismatch',
    );
  });
});
