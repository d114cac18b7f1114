// Google's apksigner (Debian package, apksig 31.0.2) as the oracle:
//  - for an RSA key, `signet` output equals `apksigner sign` output byte for byte on every valid
//    fixture (same key, schemes and alignment);
//  - `apksigner verify --verbose` accepts what Signet signs with RSA and EC keys;
//  - Signet's verifier reaches apksigner's verdict on every fixture apksigner can judge.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { verifyApk, v1SignerNameFor } from '../../../src/signing/android/index.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, testOutputDir } from '../../support/fixtures.ts';
import { apksigFixtures, apksigner, keyFile, mapLimit, needsApksigner, signBuffer, testIdentity } from '../../support/android-signing.ts';

const out = testOutputDir('signing', 'android', 'oracle');
const available = needsSharedFixtures().skip === false && needsApksigner().skip === false;
const skip = available ? false : 'needs ../shared/fixtures and apksigner';
// Every fixture that is a well-formed APK: unsigned inputs, golden outputs and signed variants.
const validInputs = available ? [...apksigFixtures('golden'), ...apksigFixtures('signed')] : [];

async function ourVerdict(file: string, minSdk?: number): Promise<boolean> {
  try {
    return (await verifyApk(new BufferSource(readFileSync(file)), minSdk === undefined ? {} : { minSdk })).verified;
  } catch (error) {
    if (error instanceof SigningError) return false;
    throw error;
  }
}

async function apksignerVerdict(file: string, minSdk?: number): Promise<{ verifies: boolean; output: string }> {
  const args = ['verify', '--verbose', ...(minSdk === undefined ? [] : ['--min-sdk-version', String(minSdk)]), file];
  const run = await apksigner(args);
  return { verifies: run.code === 0 && run.stdout.startsWith('Verifies'), output: run.stdout + run.stderr };
}

describe('apksigner oracle', { skip }, () => {
  mkdirSync(out, { recursive: true });

  it('signs every valid fixture byte-identically to `apksigner sign` (RSA-2048, v1+v2+v3)', async () => {
    const identity = await testIdentity('rsa-2048');
    const mismatches = await mapLimit(validInputs, 2, async (input) => {
      const name = path.basename(input, '.apk');
      const theirs = path.join(out, `${name}.apksigner.apk`);
      const run = await apksigner(['sign', '--key', keyFile('rsa-2048.pk8'), '--cert', keyFile('rsa-2048.x509.pem'), '--v4-signing-enabled', 'false', '--in', input, '--out', theirs]);
      assert.equal(run.code, 0, `apksigner sign ${name}: ${run.stderr}`);
      const { output } = await signBuffer(readFileSync(input), { identity, v1SignerName: v1SignerNameFor(undefined, 'rsa-2048.pk8') });
      writeFileSync(path.join(out, `${name}.signet.apk`), output);
      return output.equals(readFileSync(theirs)) ? null : name;
    });
    assert.deepEqual(mismatches.filter((m) => m !== null), []);
  });

  it('`apksigner verify --verbose` accepts Signet output signed with an EC P-256 key', async () => {
    const identity = await testIdentity('ec-p256');
    const failures = await mapLimit(validInputs, 2, async (input) => {
      const name = path.basename(input, '.apk');
      const signed = path.join(out, `${name}.signet-ec.apk`);
      const { output, result } = await signBuffer(readFileSync(input), { identity, v1SignerName: 'ec-p256' });
      assert.equal(result.signatureAlgorithm, 'ECDSA_WITH_SHA256');
      writeFileSync(signed, output);
      const verdict = await apksignerVerdict(signed);
      return verdict.verifies ? null : `${name}: ${verdict.output}`;
    });
    assert.deepEqual(failures.filter((f) => f !== null), []);
  });

  it('`apksigner verify` accepts key-rotated output (v3 lineage at SDK 28, v3.1 at SDK 33)', async () => {
    const input = readFileSync(apksigFixtures('golden').find((f) => f.endsWith('golden-aligned-in.apk'))!);
    for (const minSdk of [28, 33]) {
      const { output } = await signBuffer(input, {
        identity: await testIdentity('rsa-2048_2'),
        v1SignerName: 'rsa-2048',
        rotation: { previous: await testIdentity('rsa-2048'), lineageFile: readFileSync(keyFile('rsa-2048-lineage-2-signers')), minSdk },
      });
      const file = path.join(out, `rotated-${minSdk}.apk`);
      writeFileSync(file, output);
      const verdict = await apksignerVerdict(file);
      assert.ok(verdict.verifies, verdict.output);
    }
  });

  it('agrees with apksigner on every fixture, at the manifest minSdk and at API 24', async () => {
    // apksigner 31 on Java 17 crashes on RSA-PSS (see the dedicated test in verifier.test.ts).
    const judged = [...validInputs, ...apksigFixtures('negative')].filter((f) => !f.includes('rsa-pss'));
    const disagreements = await mapLimit(judged.flatMap((f) => [[f, undefined], [f, 24]] as const), 2, async ([file, minSdk]) => {
      const theirs = await apksignerVerdict(file, minSdk);
      const ours = await ourVerdict(file, minSdk);
      return ours === theirs.verifies ? null : `${path.basename(file)} (min ${minSdk ?? 'manifest'}): signet ${ours}, apksigner ${theirs.verifies}`;
    });
    assert.deepEqual(disagreements.filter((d) => d !== null), []);
  });
});
