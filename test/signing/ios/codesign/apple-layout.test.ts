// Identity signatures laid out as Apple's codesign lays them out: the TestApp golden
// (calabash/iOSDeviceManager, Xcode 2022; ios-signing.md §6.1, §7, §8.2) field by field, plus the
// refusals that protect the output (encrypted slices, data after the signature).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codeSignatureCommand } from '../../../../src/signing/ios/macho/inspect.ts';
import { parseMachO } from '../../../../src/signing/ios/macho/parse.ts';
import { parseCodeDirectory } from '../../../../src/signing/ios/codesign/code-directory.ts';
import { CSSLOT_DER_ENTITLEMENTS } from '../../../../src/signing/ios/codesign/constants.ts';
import { identityCodeSigner } from '../../../../src/signing/ios/codesign/identity-signer.ts';
import { signMachO } from '../../../../src/signing/ios/codesign/sign.ts';
import { parseSuperBlob } from '../../../../src/signing/ios/codesign/super-blob.ts';
import { verifyMachO } from '../../../../src/signing/ios/codesign/verify.ts';
import { plistBoolean, plistDict, plistString } from '../../../../src/signing/plist/index.ts';
import { buildThin, needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

const signer = (teamId?: string) => {
  const pki = testPki();
  return identityCodeSigner({ ...pki.leaf, chain: [pki.intermediate.certificate, pki.root.certificate] }, teamId ? { teamId } : {});
};

function thinSlice(bytes: Buffer) {
  const file = parseMachO(bytes);
  if (file.kind !== 'thin') throw new Error('expected a thin file');
  return file.slice;
}

function signatureOf(bytes: Buffer) {
  const slice = thinSlice(bytes);
  const cs = codeSignatureCommand(slice)!;
  return parseSuperBlob(slice.data.subarray(cs.dataoff, cs.dataoff + cs.datasize));
}

describe('Apple layout of identity signatures', needsToolchain(), () => {
  it("matches TestApp's CodeDirectory header and DER entitlements bytes", () => {
    const entitlements = plistDict({
      'application-identifier': plistString('FYD86LA7RE.sh.calaba.TestApp'),
      'com.apple.developer.team-identifier': plistString('FYD86LA7RE'),
      'get-task-allow': plistBoolean(true),
    });
    const out = signMachO(buildThin({ arch: 'arm64', kind: 'executable', minOS: '11.0' }), {
      signer: signer('FYD86LA7RE'),
      identifier: 'sh.calaba.TestApp',
      entitlements,
      specialSlotHashes: { infoPlist: Buffer.from('Info.plist bytes'), codeResources: Buffer.from('CodeResources bytes') },
    }).bytes;
    const entries = signatureOf(out);
    assert.deepEqual(entries.map((e) => e.type), [0, 2, 5, 7, 0x10000]);
    const cdBlob = entries[0]!.blob;
    // Golden: version 0x20400, flags 0, hashOffset 0x155, identOffset 0x58, nSpecialSlots 7,
    // hashSize 32, hashType 2, pageSize 12, teamOffset 0x6a, execSegBase 0, execSegFlags 0x11.
    assert.equal(cdBlob.readUInt32BE(8), 0x20400);
    assert.equal(cdBlob.readUInt32BE(12), 0);
    assert.equal(cdBlob.readUInt32BE(16), 0x155);
    assert.equal(cdBlob.readUInt32BE(20), 0x58);
    assert.equal(cdBlob.readUInt32BE(24), 7);
    assert.deepEqual([...cdBlob.subarray(36, 40)], [32, 2, 0, 12]);
    assert.equal(cdBlob.readUInt32BE(48), 0x6a);
    assert.equal(cdBlob.readBigUInt64BE(64), 0n);
    assert.equal(cdBlob.readBigUInt64BE(80), 0x11n);
    const cd = parseCodeDirectory(cdBlob);
    assert.equal(cd.teamId, 'FYD86LA7RE');
    assert.equal(cd.codeLimit, codeSignatureCommand(thinSlice(out))!.dataoff);
    const der = entries.find((e) => e.type === CSSLOT_DER_ENTITLEMENTS)!.blob;
    const golden =
      'fade7172' + '00000091' + '708186020101b0818030360c16' + Buffer.from('application-identifier').toString('hex') +
      '0c1c' + Buffer.from('FYD86LA7RE.sh.calaba.TestApp').toString('hex') +
      '30310c23' + Buffer.from('com.apple.developer.team-identifier').toString('hex') + '0c0a' + Buffer.from('FYD86LA7RE').toString('hex') +
      '30130c0e' + Buffer.from('get-task-allow').toString('hex') + '0101ff';
    assert.equal(der.toString('hex'), golden);
    const report = verifyMachO(out, { infoPlist: Buffer.from('Info.plist bytes'), codeResources: Buffer.from('CodeResources bytes') });
    assert.ok(report.valid, JSON.stringify(report.slices[0]!.problems));
    assert.equal(report.slices[0]!.designatedRequirementSatisfied, true);
  });

  it('reports a designated requirement the signing chain does not satisfy', () => {
    const out = signMachO(buildThin({ arch: 'arm64', kind: 'executable' }), {
      signer: signer(),
      identifier: 'com.example.dr',
      designatedRequirement: { op: 'and', left: { op: 'ident', identifier: 'com.example.dr' }, right: { op: 'anchorHash', slot: -1, hash: Buffer.alloc(20, 7) } },
    }).bytes;
    const report = verifyMachO(out);
    assert.equal(report.valid, false);
    assert.equal(report.slices[0]!.designatedRequirementSatisfied, false);
    assert.match(report.slices[0]!.problems.join(), /does not satisfy the designated requirement/);
  });

  it('refuses FairPlay-encrypted slices unless allowed', () => {
    const input = Buffer.from(buildThin({ arch: 'arm64', kind: 'executable' }));
    // ld64.lld writes LC_ENCRYPTION_INFO_64 with cryptid 0; set cryptid = 1 in place.
    let found = false;
    for (let i = 0, at = 32; i < thinSlice(input).commands.length; i++, at += input.readUInt32LE(at + 4)) {
      if (input.readUInt32LE(at) === 0x2c) {
        input.writeUInt32LE(1, at + 16);
        found = true;
      }
    }
    assert.ok(found, 'the test binary has LC_ENCRYPTION_INFO_64');
    assert.throws(() => signMachO(input, { identifier: 'x.y' }), { code: 'macho_unsupported' });
    assert.ok(verifyMachO(signMachO(input, { identifier: 'x.y', allowEncrypted: true }).bytes).valid);
  });

  it('refuses to drop __LINKEDIT data that lies after an old signature', () => {
    const signed = Buffer.from(signMachO(buildThin({ arch: 'arm64', kind: 'executable' }), { identifier: 'x.y' }).bytes);
    const slice = thinSlice(signed);
    const cs = codeSignatureCommand(slice)!;
    // Point LC_SYMTAB's string table into the signature area.
    for (let i = 0, at = 32; i < slice.commands.length; i++, at += signed.readUInt32LE(at + 4)) {
      if (signed.readUInt32LE(at) === 0x2) {
        signed.writeUInt32LE(cs.dataoff + 64, at + 16);
        signed.writeUInt32LE(16, at + 20);
      }
    }
    assert.throws(() => signMachO(signed, { identifier: 'x.y' }), { code: 'macho_unsupported' });
  });
});
