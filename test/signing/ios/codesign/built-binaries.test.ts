// Binaries linked here with clang + ld64.lld: thin arm64, arm64e, fat arm64 + x86_64 (32- and
// 64-bit fat headers), a dylib, armv7 for iOS 9 (SHA-1 agility), a linker-signed executable
// (LC_CODE_SIGNATURE replaced) and executables without LC_CODE_SIGNATURE (inserted).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codeSignatureCommand, findSegment } from '../../../../src/signing/ios/macho/inspect.ts';
import { parseMachO } from '../../../../src/signing/ios/macho/parse.ts';
import { identityCodeSigner } from '../../../../src/signing/ios/codesign/identity-signer.ts';
import { readCodeSignatures } from '../../../../src/signing/ios/codesign/read-signature.ts';
import { signMachO } from '../../../../src/signing/ios/codesign/sign.ts';
import { verifyMachO } from '../../../../src/signing/ios/codesign/verify.ts';
import { plistDict, plistString } from '../../../../src/signing/plist/index.ts';
import { buildFatFile, buildThin, needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';
import { hasTool, objdumpComplaints, opensslVerifySlices } from './oracles.ts';

const ENTITLEMENTS = plistDict({ 'application-identifier': plistString('SGNTEST123.com.example.built') });

function signer() {
  const pki = testPki();
  return identityCodeSigner({ ...pki.leaf, chain: [pki.intermediate.certificate, pki.root.certificate] }, { signingTime: new Date('2026-01-01T00:00:00Z') });
}

function check(bytes: Buffer, label: string): void {
  const report = verifyMachO(bytes);
  assert.ok(report.valid, `${label}: ${JSON.stringify(report.slices.map((s) => s.problems))}`);
  if (hasTool('llvm-objdump')) assert.equal(objdumpComplaints(bytes), '', label);
}

describe('binaries built with clang + ld64.lld', needsToolchain(), () => {
  it('thin arm64 executable without LC_CODE_SIGNATURE: inserted, signed ad-hoc and with an identity', () => {
    const input = buildThin({ arch: 'arm64', kind: 'executable' });
    const parsed = parseMachO(input);
    assert.equal(parsed.kind === 'thin' && codeSignatureCommand(parsed.slice), undefined);
    check(signMachO(input, { identifier: 'com.example.built' }).bytes, 'ad-hoc');
    const signed = signMachO(input, { identifier: 'com.example.built', signer: signer(), entitlements: ENTITLEMENTS }).bytes;
    check(signed, 'identity');
    if (hasTool('openssl')) assert.deepEqual(opensslVerifySlices(signed), []);
    const out = parseMachO(signed);
    assert.equal(out.kind, 'thin');
    if (out.kind !== 'thin') return;
    const cs = codeSignatureCommand(out.slice)!;
    const linkedit = findSegment(out.slice, '__LINKEDIT')!;
    assert.equal(cs.dataoff % 16, 0);
    assert.equal(linkedit.fileoff + linkedit.filesize, signed.length);
    const report = verifyMachO(signed).slices[0]!;
    assert.equal(report.codeDirectories[0]!.execSeg!.flags, 1);
    assert.equal(report.codeDirectories[0]!.execSeg!.limit, findSegment(out.slice, '__TEXT')!.filesize);
  });

  it('linker-signed arm64 executable: the linker signature is replaced', () => {
    const input = buildThin({ arch: 'arm64', kind: 'executable', linkerSigned: true });
    assert.equal(readCodeSignatures(input)[0]?.linkerSigned, true);
    const result = signMachO(input, { signer: signer(), identifier: 'com.example.built', entitlements: ENTITLEMENTS });
    check(result.bytes, 'linker-signed');
    assert.equal(verifyMachO(result.bytes).slices[0]!.codeDirectories[0]!.flags, 0, 'CS_LINKER_SIGNED is not copied');
  });

  it('dylib: no MAIN_BINARY flag, no entitlements', () => {
    const input = buildThin({ arch: 'arm64', kind: 'dylib' });
    const result = signMachO(input, { signer: signer(), identifier: 'com.example.lib', entitlements: ENTITLEMENTS });
    check(result.bytes, 'dylib');
    const slice = verifyMachO(result.bytes).slices[0]!;
    assert.equal(slice.codeDirectories[0]!.execSeg!.flags, 0);
    assert.equal(slice.entitlements, undefined);
  });

  it('fat arm64 + x86_64 (32- and 64-bit fat headers) and arm64e, 16 KiB pages', () => {
    const arm64 = buildThin({ arch: 'arm64', kind: 'executable' });
    const x86 = buildThin({ arch: 'x86_64', kind: 'executable' });
    for (const fat64 of [false, true]) {
      const input = buildFatFile([arm64, x86], { fat64 });
      const result = signMachO(input, { signer: signer(), identifier: 'com.example.fat', pageSize: 16384 });
      assert.equal(result.bytes.readUInt32BE(0), fat64 ? 0xcafebabf : 0xcafebabe);
      assert.deepEqual(result.slices.map((s) => s.arch), ['arm64', 'x86_64']);
      check(result.bytes, fat64 ? 'fat64' : 'fat');
      assert.ok(verifyMachO(result.bytes).slices.every((s) => s.codeDirectories.every((c) => c.pageSize === 16384)));
    }
    check(signMachO(buildThin({ arch: 'arm64e', kind: 'executable' }), { identifier: 'com.example.e' }).bytes, 'arm64e');
  });

  it('armv7 for iOS 9 gets SHA-1 + SHA-256 directories; arm64 for iOS 14 gets SHA-256 only', () => {
    const armv7 = buildThin({ arch: 'armv7', kind: 'executable', minOS: '9.0' });
    const arm64 = buildThin({ arch: 'arm64', kind: 'executable', minOS: '14.0' });
    const fat = signMachO(buildFatFile([armv7, arm64]), { signer: signer(), identifier: 'com.example.old' });
    check(fat.bytes, 'armv7+arm64');
    // One digest set for the whole file (Apple): the iOS 9 slice pulls SHA-1 into both.
    assert.deepEqual(fat.slices.map((s) => s.codeDirectories.map((c) => c.hashType.name)), [['sha1', 'sha256'], ['sha1', 'sha256']]);
    const modern = signMachO(arm64, { identifier: 'com.example.new' });
    assert.deepEqual(modern.slices[0]!.codeDirectories.map((c) => c.hashType.name), ['sha256']);
  });

  it('refuses to insert LC_CODE_SIGNATURE when the header padding is gone (macho_no_room)', () => {
    const input = buildThin({ arch: 'arm64', kind: 'executable', headerPad: 0 });
    const parsed = parseMachO(input);
    if (parsed.kind !== 'thin') return;
    const text = findSegment(parsed.slice, '__TEXT')!;
    const room = Math.min(...text.sections.map((s) => s.offset)) - 32 - input.readUInt32LE(20);
    if (room >= 16) {
      // ld64.lld keeps a page-aligned __text, so shrink the room by hand: fill it with a dummy command.
      const patched = Buffer.from(input);
      const ncmds = patched.readUInt32LE(16);
      const sizeofcmds = patched.readUInt32LE(20);
      const filler = room - (room % 8) - 8 > 0 ? room - (room % 8) - 8 : 8;
      patched.writeUInt32LE(0x6f, 32 + sizeofcmds); // an unknown command kept raw
      patched.writeUInt32LE(filler, 36 + sizeofcmds);
      patched.writeUInt32LE(ncmds + 1, 16);
      patched.writeUInt32LE(sizeofcmds + filler, 20);
      assert.throws(() => signMachO(patched, { identifier: 'x.y' }), { code: 'macho_no_room' });
    } else {
      assert.throws(() => signMachO(input, { identifier: 'x.y' }), { code: 'macho_no_room' });
    }
  });
});
