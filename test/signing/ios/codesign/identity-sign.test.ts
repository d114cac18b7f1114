import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadIdentity, type Identity } from '../../../../src/signing/cms/index.ts';
import { buildMachO } from '../../../../src/signing/ios/macho/build.ts';
import { codeSignatureCommand } from '../../../../src/signing/ios/macho/inspect.ts';
import { parseMachO } from '../../../../src/signing/ios/macho/parse.ts';
import { CS_EXECSEG_ALLOW_UNSIGNED, CS_EXECSEG_MAIN_BINARY } from '../../../../src/signing/ios/codesign/constants.ts';
import { identityCodeSigner } from '../../../../src/signing/ios/codesign/identity-signer.ts';
import { signMachO, type CodeSigner } from '../../../../src/signing/ios/codesign/sign.ts';
import { parseSuperBlob } from '../../../../src/signing/ios/codesign/super-blob.ts';
import { verifyMachO } from '../../../../src/signing/ios/codesign/verify.ts';
import { plistBoolean, plistDict, plistInteger, plistString } from '../../../../src/signing/plist/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';
import { testPki, TEST_TEAM_ID } from '../../../support/pki.ts';
import { allFixtureBinaries, isMalformedFixture } from '../macho/fixture-binaries.ts';
import { hasTool, objdumpComplaints, opensslVerifySlices } from './oracles.ts';

const SIGNING_TIME = new Date('2026-03-01T12:00:00Z');
const ENTITLEMENTS = plistDict({
  'application-identifier': plistString(`${TEST_TEAM_ID}.com.example.signet`),
  'com.apple.developer.team-identifier': plistString(TEST_TEAM_ID),
  'get-task-allow': plistBoolean(true),
  'com.example.limit': plistInteger(200),
});

function withChain(identity: Identity): Identity {
  const pki = testPki();
  return { ...identity, chain: [pki.intermediate.certificate, pki.root.certificate] };
}

describe('signing with an identity', needsSharedFixtures(), () => {
  let rsa: CodeSigner;
  let ec: CodeSigner;
  before(async () => {
    const pki = testPki();
    // The RSA identity goes through a real PKCS#12 file (openssl-made, with its chain).
    const p12 = pki.p12(pki.leaf, { password: 'secret', includeChain: true });
    rsa = identityCodeSigner(await loadIdentity(p12, { password: 'secret' }), { signingTime: SIGNING_TIME });
    ec = identityCodeSigner(withChain(pki.ecLeaf), { signingTime: SIGNING_TIME });
  });

  it('every fixture binary signs and verifies (ours, openssl cms, llvm-objdump, round trip)', () => {
    const files = allFixtureBinaries().filter((f) => !isMalformedFixture(f));
    assert.ok(files.length >= 40);
    files.forEach((file, i) => {
      const signer = i % 2 === 0 ? rsa : ec;
      const out = signMachO(readFileSync(file), { signer, identifier: 'com.example.signet', entitlements: ENTITLEMENTS }).bytes;
      const report = verifyMachO(out);
      assert.ok(report.valid, `${file}: ${JSON.stringify(report.slices.map((s) => s.problems))}`);
      for (const slice of report.slices) {
        assert.equal(slice.teamId, TEST_TEAM_ID);
        assert.equal(slice.cms?.chain.length, 3, 'leaf + intermediate + root');
        assert.equal(slice.designatedRequirementSatisfied, true);
      }
      assert.ok(buildMachO(parseMachO(out)).equals(out), `round trip of signed ${file}`);
      // openssl is slow to spawn: check every fourth file (all groups of the corpus are covered).
      if (i % 4 === 0 && hasTool('openssl')) assert.deepEqual(opensslVerifySlices(out), [], file);
      if (i % 4 === 2 && hasTool('llvm-objdump')) assert.equal(objdumpComplaints(out), '', file);
    });
  });

  it('llvm-objdump reads signed thin and fat outputs without complaint', { skip: hasTool('llvm-objdump') ? false : 'llvm-objdump missing' }, () => {
    for (const rel of ['ios/isign/Test.app/isignTestApp', 'ios/macho/hqtsm-mach/macho/dll/dist/x86_64-arm64/u/sample.dylib', 'ios/isign/Test_unsigned_thin.app/isignTestApp']) {
      const out = signMachO(readFileSync(sharedFixture(rel)!), { signer: rsa, identifier: 'com.example.signet' }).bytes;
      assert.equal(objdumpComplaints(out), '', rel);
    }
  });

  it("re-signs Apple's fat Test.app binaries with SHA-1 + SHA-256 directories (min iOS < 11)", () => {
    const dir = sharedFixture('ios/isign/Test.app')!;
    const infoPlist = readFileSync(path.join(dir, 'Info.plist'));
    const codeResources = readFileSync(path.join(dir, '_CodeSignature/CodeResources'));
    const main = signMachO(readFileSync(path.join(dir, 'isignTestApp')), {
      signer: rsa,
      identifier: 'com.example.signet',
      entitlements: ENTITLEMENTS,
      specialSlotHashes: { infoPlist, codeResources },
    });
    const report = verifyMachO(main.bytes, { infoPlist, codeResources });
    assert.ok(report.valid, JSON.stringify(report.slices.map((s) => s.problems)));
    assert.deepEqual(report.slices.map((s) => s.arch), ['armv7', 'arm64']);
    for (const slice of report.slices) {
      assert.deepEqual(slice.codeDirectories.map((c) => [c.slot, c.hashType, c.version, c.nSpecialSlots]), [
        [0, 'sha1', 0x20400, 7],
        [0x1000, 'sha256', 0x20400, 7],
      ]);
      assert.deepEqual(slice.unchecked, []);
      assert.equal(slice.codeDirectories[0]!.execSeg!.flags, CS_EXECSEG_MAIN_BINARY | CS_EXECSEG_ALLOW_UNSIGNED);
      assert.equal(slice.entitlements?.value.get('get-task-allow')?.type, 'boolean');
    }
    // A different Info.plist no longer matches special slot 1.
    const wrong = verifyMachO(main.bytes, { infoPlist: Buffer.concat([infoPlist, Buffer.from(' ')]), codeResources });
    assert.equal(wrong.valid, false);
    assert.match(wrong.slices[0]!.problems.join(), /special slot 1/);
    // Every Apple-signed Swift dylib: no entitlements, no MAIN_BINARY, identifier kept from the
    // old signature, SHA-1 + SHA-256 on each of its armv7/armv7s/arm64 slices.
    const frameworks = readdirSync(path.join(dir, 'Frameworks')).filter((f) => f.endsWith('.dylib'));
    assert.ok(frameworks.length >= 7);
    for (const name of frameworks) {
      const dylib = signMachO(readFileSync(path.join(dir, 'Frameworks', name)), { signer: rsa, entitlements: ENTITLEMENTS });
      assert.equal(dylib.identifier, `com.apple.dt.runtime.${name.slice(3, -6)}`);
      const dylibReport = verifyMachO(dylib.bytes);
      assert.ok(dylibReport.valid, `${name}: ${JSON.stringify(dylibReport.slices.map((s) => s.problems))}`);
      assert.ok(dylibReport.slices.length >= 2);
      for (const slice of dylibReport.slices) {
        assert.equal(slice.entitlements, undefined);
        assert.deepEqual(slice.codeDirectories.map((c) => [c.hashType, c.nSpecialSlots, c.execSeg?.flags]), [['sha1', 2, 0], ['sha256', 2, 0]]);
      }
    }
  });

  it('reserves exactly the space the signature needs', () => {
    const out = signMachO(readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/arm64/u/main')!), { signer: rsa, identifier: 'a.b' }).bytes;
    const slice = parseMachO(out);
    assert.equal(slice.kind, 'thin');
    if (slice.kind !== 'thin') return;
    const cs = codeSignatureCommand(slice.slice)!;
    const superBlobLength = out.readUInt32BE(cs.dataoff + 4);
    assert.ok(cs.datasize - superBlobLength < 16, `${cs.datasize} reserved for ${superBlobLength}`);
    assert.deepEqual(parseSuperBlob(out.subarray(cs.dataoff)).map((e) => e.type), [0, 2, 0x10000]);
  });

  it('is deterministic for RSA with a fixed signing time; reserve "apple" keeps codesign\'s 18000-byte CMS room', () => {
    const input = readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/dll/dist/x86_64-arm64/u/sample.dylib')!);
    const a = signMachO(input, { signer: rsa, identifier: 'a.b' }).bytes;
    const b = signMachO(input, { signer: rsa, identifier: 'a.b' }).bytes;
    assert.ok(a.equals(b));
    const roomy = signMachO(input, { signer: rsa, identifier: 'a.b', reserve: 'apple' }).bytes;
    const report = verifyMachO(roomy);
    assert.ok(report.valid, JSON.stringify(report.slices.map((s) => s.problems)));
    assert.ok(roomy.length > a.length + 2 * 15000);
  });

  it('detects tampering: a changed code byte, a changed CMS byte', () => {
    const out = signMachO(readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/arm64/u/main')!), { signer: ec, identifier: 'a.b' }).bytes;
    const code = Buffer.from(out);
    code[20000] = (code[20000]! + 1) & 0xff;
    assert.match(verifyMachO(code).slices[0]!.problems.join(), /page 4 hash does not match/);
    const parsed = parseMachO(out);
    if (parsed.kind !== 'thin') return;
    const cs = codeSignatureCommand(parsed.slice)!;
    const cms = Buffer.from(out);
    const superBlobLength = out.readUInt32BE(cs.dataoff + 4);
    const at = cs.dataoff + superBlobLength - 10; // inside the signature value, the blob's last bytes
    cms[at] = cms[at]! ^ 0xff;
    assert.match(verifyMachO(cms).slices[0]!.problems.join(), /CMS/);
  });

  it('refuses an identity whose chain does not reach a root', () => {
    const pki = testPki();
    assert.throws(() => identityCodeSigner({ ...pki.leaf, chain: [] }), { code: 'certificate_chain_incomplete' });
  });
});
