// Re-signing third-party apps: isign's Xcode 7 Test.app (signed, and its unsigned variants) and
// fastlane's very-capable-app.ipa, with the test PKI's distribution identity and a wildcard
// enterprise profile. Each output must pass Signet's whole-app verifier, `openssl cms -verify`
// on every Mach-O slice (signature alone, then with the chain to the test CA), and the
// independent Python seal check.
//
// isign's fixture folders are not clean apps (fixtures README, "Known gaps"): they hold repository
// files Xcode never sealed (build.sh, isignTestApp.xcodeproj/, isignTestApp*Tests/) and lack
// libswiftCore.dylib and embedded.mobileprovision. The .ipa is built from the files that exist,
// without those repository files.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { parseProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpa } from '../../../../src/signing/ios/resign/index.ts';
import { allProblems, verifyIpa } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { isMachO } from '../../../../src/signing/ios/macho/parse.ts';
import { needsSharedFixtures, sharedFixture, testOutputDir } from '../../../support/fixtures.ts';
import { ipaFromApp, opensslVerifyChain, pythonSealCheck, unzipIpa } from '../../../support/ios-app.ts';
import { testPki } from '../../../support/pki.ts';
import { opensslVerifySlices } from '../codesign/oracles.ts';

const ISIGN_REPO_FILES = ['build.sh', 'isignTestApp.xcodeproj', 'isignTestAppTests', 'isignTestAppUITests'];

async function resignAndCheck(name: string, input: Buffer): Promise<{ output: Buffer; file: string }> {
  const pki = testPki();
  const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*' }));
  const sink = new MemorySink();
  const result = await resignIpa(new BufferSource(input), sink, { identity: pki.leaf, profiles: [profile], workers: 0 });
  const output = sink.toBuffer();
  const file = path.join(testOutputDir('ios-app'), `${name}-signed.ipa`);
  writeFileSync(file, output);

  const report = await verifyIpa(new BufferSource(output));
  assert.deepEqual(allProblems(report), []);
  assert.equal(report.verified, true);
  assert.equal(report.teamId, pki.teamId);
  assert.ok(result.bundles.every((b) => b.code.length > 0));

  // openssl: the CMS of every slice of every Mach-O file verifies over its CodeDirectory.
  const dir = unzipIpa(file, name);
  let slicesChecked = 0;
  for (const bundle of result.bundles) {
    for (const code of bundle.code) {
      const bytes = readFileSync(path.join(dir, code.path));
      assert.ok(isMachO(bytes));
      assert.deepEqual(opensslVerifySlices(bytes), [], code.path);
      // …and with the chain: the CMS carries intermediate and root, up to the test CA.
      assert.deepEqual(opensslVerifyChain(bytes, testPki().root.certificatePem, name), [], code.path);
      slicesChecked += code.cdhashes.length;
    }
  }
  assert.ok(slicesChecked > 0);

  const seal = pythonSealCheck(file, name);
  assert.deepEqual(seal.problems, []);
  assert.equal(seal.bundles, result.bundles.length);
  assert.ok(seal.checked > 0);
  return { output, file };
}

describe('re-signing third-party apps', needsSharedFixtures(), () => {
  it('isign Test.app (fat armv7+arm64, eight Swift dylibs) verifies everywhere', async () => {
    const { bytes } = ipaFromApp(sharedFixture('ios/isign/Test.app')!, 'isign-test', ISIGN_REPO_FILES);
    const { output } = await resignAndCheck('isign-test', bytes);
    const report = await verifyIpa(new BufferSource(output));
    const app = report.bundles[0]!;
    assert.equal(app.code.length, 9); // executable + 8 dylibs
    assert.ok(app.code.every((c) => c.slices.length >= 2), 'fat files keep every slice');
    // Minimum iOS 8: Apple's agility rule gives SHA-1 + SHA-256 CodeDirectories.
    assert.deepEqual(app.code.find((c) => c.path.endsWith('/isignTestApp'))!.slices[0]!.hashTypes, ['sha1', 'sha256']);
  });

  it('isign Test_unsigned_thin.app (never signed) verifies everywhere', async () => {
    const { bytes } = ipaFromApp(sharedFixture('ios/isign/Test_unsigned_thin.app')!, 'isign-thin', ISIGN_REPO_FILES);
    await resignAndCheck('isign-thin', bytes);
  });

  it('refuses isign Test_unsigned_fat.app, whose truncated executable is malformed, naming the file', async () => {
    const { bytes } = ipaFromApp(sharedFixture('ios/isign/Test_unsigned_fat.app')!, 'isign-fat', ISIGN_REPO_FILES);
    const pki = testPki();
    const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*' }));
    await assert.rejects(resignIpa(new BufferSource(bytes), new MemorySink(), { identity: pki.leaf, profiles: [profile], workers: 0 }), (error: unknown) => {
      assert.ok(error instanceof SigningError);
      assert.equal(error.code, 'macho_invalid');
      assert.match(error.message, /Test_unsigned_fat\.app\/isignTestApp: .*__LINKEDIT/);
      return true;
    });
  });

  it("fastlane very-capable-app.ipa verifies everywhere and gets DER entitlements the original lacked", async () => {
    const input = readFileSync(sharedFixture('ios/fastlane/ipas/very-capable-app.ipa')!);
    const before = await verifyIpa(new BufferSource(input));
    assert.equal(before.verified, false);
    assert.ok(allProblems(before).some((p) => /without DER entitlements/.test(p)));
    const { output } = await resignAndCheck('very-capable', input);
    const after = await verifyIpa(new BufferSource(output));
    const ent = after.bundles[0]!.entitlements as Record<string, unknown>;
    assert.equal(ent['application-identifier'], `${testPki().teamId}.org.fastlane.very-capable-app`);
  });
});
