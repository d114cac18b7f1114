import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { codeSignatureCommand } from '../../../../src/signing/ios/macho/inspect.ts';
import { parseMachO } from '../../../../src/signing/ios/macho/parse.ts';
import { parseCodeDirectory, serializeCodeDirectory } from '../../../../src/signing/ios/codesign/code-directory.ts';
import { CSMAGIC_CODEDIRECTORY, CSSLOT_REQUIREMENTS } from '../../../../src/signing/ios/codesign/constants.ts';
import { appleDesignatedRequirement, designatedRequirementFor } from '../../../../src/signing/ios/codesign/designated-requirement.ts';
import { decodeExpr, encodeExpr, formatExpr, oidBytes, oidText, parseRequirements, serializeRequirements } from '../../../../src/signing/ios/codesign/requirements.ts';
import { parseSuperBlob, serializeSuperBlob } from '../../../../src/signing/ios/codesign/super-blob.ts';
import { canonicalIdentifier } from '../../../../src/signing/ios/codesign/identifier.ts';
import { readCodeSignatures } from '../../../../src/signing/ios/codesign/read-signature.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';
import { allFixtureBinaries, isMalformedFixture } from '../macho/fixture-binaries.ts';

function signatures(): Array<{ file: string; superBlob: Buffer }> {
  const out: Array<{ file: string; superBlob: Buffer }> = [];
  for (const file of allFixtureBinaries()) {
    if (isMalformedFixture(file)) continue;
    const parsed = parseMachO(readFileSync(file));
    for (const slice of parsed.kind === 'thin' ? [parsed.slice] : parsed.slices) {
      const cs = codeSignatureCommand(slice);
      if (!cs) continue;
      const area = slice.data.subarray(cs.dataoff, cs.dataoff + cs.datasize);
      out.push({ file, superBlob: area.subarray(0, area.readUInt32BE(4)) });
    }
  }
  return out;
}

describe('signature blobs round-trip on Apple, Xcode and zsign signatures', needsSharedFixtures(), () => {
  const all = signatures();

  it('SuperBlob, CodeDirectory and Requirements parse → serialize reproduce the bytes', () => {
    assert.ok(all.length >= 20, `found ${all.length} signatures`);
    let cds = 0;
    let reqs = 0;
    for (const { file, superBlob } of all) {
      const entries = parseSuperBlob(superBlob);
      assert.ok(serializeSuperBlob(entries).equals(superBlob), `SuperBlob of ${file}`);
      for (const entry of entries) {
        if (entry.blob.readUInt32BE(0) === CSMAGIC_CODEDIRECTORY) {
          assert.ok(serializeCodeDirectory(parseCodeDirectory(entry.blob)).equals(entry.blob), `CodeDirectory of ${file}`);
          cds++;
        }
        if (entry.type === CSSLOT_REQUIREMENTS) {
          assert.ok(serializeRequirements(parseRequirements(entry.blob)).equals(entry.blob), `requirements of ${file}`);
          reqs++;
        }
      }
    }
    assert.ok(cds > all.length && reqs === all.length);
  });

  it("reads an existing signature's identifier, team and entitlements", () => {
    const [armv7, arm64] = readCodeSignatures(readFileSync(sharedFixture('ios/isign/Test.app/isignTestApp')!));
    for (const slice of [armv7!, arm64!]) {
      assert.equal(slice.identifier, 'com.saucelabs.isignTestApp');
      assert.equal(slice.adhoc, false);
      assert.equal(slice.linkerSigned, false);
      assert.ok(slice.entitlements?.value.has('application-identifier'));
    }
    assert.deepEqual(readCodeSignatures(readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/arm64/u/main')!)), [undefined]);
  });

  it("decodes Xcode's designated requirement in isign's Test.app", () => {
    const bytes = readFileSync(sharedFixture('ios/isign/Test.app/isignTestApp')!);
    const parsed = parseMachO(bytes);
    assert.equal(parsed.kind, 'fat');
    if (parsed.kind !== 'fat') return;
    const cs = codeSignatureCommand(parsed.slices[1]!)!;
    const entries = parseSuperBlob(parsed.slices[1]!.data.subarray(cs.dataoff, cs.dataoff + cs.datasize));
    const [designated] = parseRequirements(entries.find((e) => e.type === CSSLOT_REQUIREMENTS)!.blob);
    assert.equal(
      formatExpr(designated!.expr),
      'identifier "com.saucelabs.isignTestApp" and anchor apple generic and certificate leaf[subject.CN] = "iPhone Developer: Neil Kandalgaonkar (PJ5C3PEW8Z)" and certificate 1[field.1.2.840.113635.100.6.2.1] /* exists */',
    );
  });
});

describe('requirements encoding', () => {
  it("matches Apple's designated requirement bytes (TestApp golden, ios-signing.md §7)", () => {
    const blob = serializeRequirements([{ type: 3, expr: appleDesignatedRequirement('sh.calaba.TestApp', 'iPhone Developer: Karl Krukow (YTTN6Y2QS9)') }]);
    const golden =
      'fade0c01000000b40000000100000003' + '00000014' + 'fade0c00000000a000000001' +
      '0000000600000002' + '00000011' + Buffer.from('sh.calaba.TestApp').toString('hex') + '000000' +
      '000000060000000f' +
      '000000060000000b00000000' + '0000000a' + Buffer.from('subject.CN').toString('hex') + '0000' + '00000001' +
      '0000002a' + Buffer.from('iPhone Developer: Karl Krukow (YTTN6Y2QS9)').toString('hex') + '0000' +
      '0000000e00000001' + '0000000a' + '2a864886f76364060201' + '0000' + '00000000';
    assert.equal(blob.toString('hex'), golden);
  });

  it("writes Apple's empty ad-hoc requirement set", () => {
    assert.equal(serializeRequirements([]).toString('hex'), 'fade0c010000000c00000000');
  });

  it('round-trips every expression form and OIDs', () => {
    const expr = appleDesignatedRequirement('a.b', 'CN');
    assert.deepEqual(decodeExpr(encodeExpr(expr)), expr);
    assert.equal(oidText(oidBytes('1.2.840.113635.100.6.2.1')), '1.2.840.113635.100.6.2.1');
    const nested = { op: 'or', left: { op: 'not', expr: { op: 'platform', platform: 2 } }, right: { op: 'cdhash', hash: Buffer.alloc(20, 1) } } as const;
    assert.deepEqual(decodeExpr(encodeExpr(nested)), nested);
  });

  it('refuses truncated and unknown expressions with code_signature_invalid', () => {
    assert.throws(() => decodeExpr(Buffer.from('00000006', 'hex')), { code: 'code_signature_invalid' });
    assert.throws(() => decodeExpr(Buffer.from('000000ff', 'hex')), { code: 'code_signature_invalid' });
    const deep = Buffer.alloc(4 * 200);
    for (let i = 0; i < 200; i++) deep.writeUInt32BE(9, i * 4); // not(not(not(…)))
    assert.throws(() => decodeExpr(deep), { code: 'code_signature_invalid' });
  });

  it('uses the Apple form only for Apple-anchored chains', needsSharedFixtures(), () => {
    const root = readFileSync(sharedFixture('ios/identities/apple-certs/AppleIncRootCertificate.cer')!);
    const selfSigned = designatedRequirementFor('x.y', [root]);
    // Apple's root alone is no WWDR chain: DRMaker falls back to the hash form, anchored at the root.
    assert.equal(formatExpr(selfSigned).startsWith('identifier "x.y" and certificate root = H"611e5b66'), true);
    // A real Apple Development leaf + WWDR G3 + Apple Root CA gets the iOS form.
    const leaf = readFileSync(sharedFixture('ios/identities/apple-codesign/apple-signed-apple-development.cer')!);
    const wwdr = readFileSync(sharedFixture('ios/identities/apple-certs/AppleWWDRCAG3.cer')!);
    assert.equal(
      formatExpr(designatedRequirementFor('com.example.app', [leaf, wwdr, root])),
      'identifier "com.example.app" and anchor apple generic and certificate leaf[subject.CN] = "Apple Development: Gregory Szorc (DD5YMVP48D)" and certificate 1[field.1.2.840.113635.100.6.2.1] /* exists */',
    );
  });
});

describe('canonical identifiers (DiskRep::canonicalIdentifier)', () => {
  it('drops the extension unless it is a version', () => {
    assert.equal(canonicalIdentifier('sample.dylib'), 'sample');
    assert.equal(canonicalIdentifier('dir/main'), 'main');
    assert.equal(canonicalIdentifier('libfoo.2.3'), 'libfoo.2');
  });
});
