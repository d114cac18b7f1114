import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SigningError } from '../../../../src/signing/errors.ts';
import { buildFat, buildMachO, buildSlice } from '../../../../src/signing/ios/macho/build.ts';
import { CPU_TYPE_ARM, CPU_TYPE_ARM64, LC_CODE_SIGNATURE } from '../../../../src/signing/ios/macho/constants.ts';
import { codeEnd, withSignatureSpace } from '../../../../src/signing/ios/macho/edit.ts';
import { codeSignatureCommand, findSegment, minimumOS, uuid } from '../../../../src/signing/ios/macho/inspect.ts';
import { isMachO, parseMachO, parseSlice } from '../../../../src/signing/ios/macho/parse.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';
import { allFixtureBinaries, isMalformedFixture } from './fixture-binaries.ts';

const rejects = (fn: () => unknown, code: string): void => {
  assert.throws(fn, (error: unknown) => error instanceof SigningError && error.code === code);
};

describe('Mach-O parse → build', needsSharedFixtures(), () => {
  it('reproduces every fixture binary byte for byte', () => {
    const files = allFixtureBinaries();
    assert.ok(files.length >= 40, `expected the fixture corpus, found ${files.length} files`);
    for (const file of files) {
      const bytes = readFileSync(file);
      assert.ok(isMachO(bytes), file);
      if (isMalformedFixture(file)) {
        rejects(() => parseMachO(bytes), 'macho_invalid');
        continue;
      }
      assert.ok(buildMachO(parseMachO(bytes)).equals(bytes), `round trip of ${path.relative(process.cwd(), file)}`);
    }
  });

  it('reads the fat armv7 + arm64 isign executable and its load commands', () => {
    const file = parseMachO(readFileSync(sharedFixture('ios/isign/Test.app/isignTestApp')!));
    assert.equal(file.kind, 'fat');
    if (file.kind !== 'fat') return;
    assert.deepEqual(file.slices.map((s) => s.header.cputype), [CPU_TYPE_ARM, CPU_TYPE_ARM64]);
    for (const slice of file.slices) {
      assert.ok(codeSignatureCommand(slice));
      assert.equal(minimumOS(slice)?.platform, 2); // LC_VERSION_MIN_IPHONEOS
      assert.ok(minimumOS(slice)!.version < 0x000b0000);
      assert.equal(uuid(slice)?.length, 16);
    }
  });

  it('re-lays a fat file on each slice alignment when offsets are recomputed', () => {
    const bytes = readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/x86_64-arm64/u/main')!);
    const file = parseMachO(bytes);
    assert.equal(file.kind, 'fat');
    if (file.kind !== 'fat') return;
    const again = buildFat(false, file.arches.map((arch, i) => ({ arch: { ...arch, offset: undefined }, bytes: buildSlice(file.slices[i]!) })));
    assert.ok(again.equals(bytes), 'lipo layout is the canonical layout');
    const fat64 = buildFat(true, file.arches.map((arch, i) => ({ arch: { ...arch, offset: undefined }, bytes: buildSlice(file.slices[i]!) })));
    assert.equal(fat64.readUInt32BE(0), 0xcafebabf);
    assert.ok(buildMachO(parseMachO(fat64)).equals(fat64), 'fat64 round trip');
  });

  it('inserts LC_CODE_SIGNATURE into the header padding and resizes __LINKEDIT', () => {
    const bytes = readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/arm64/u/main')!);
    const slice = parseSlice(bytes);
    assert.equal(codeSignatureCommand(slice), undefined);
    const end = codeEnd(slice);
    const edited = withSignatureSpace(slice, end, 4096);
    const out = parseSlice(buildSlice(edited, { length: end + 4096 }));
    assert.deepEqual(codeSignatureCommand(out), { kind: 'code-signature', cmd: LC_CODE_SIGNATURE, dataoff: end, datasize: 4096 });
    const linkedit = findSegment(out, '__LINKEDIT')!;
    assert.equal(linkedit.fileoff + linkedit.filesize, end + 4096);
    assert.equal(linkedit.vmsize % 0x4000n, 0n);
    assert.equal(slice.commands.length + 1, out.commands.length);
    // the input model is untouched
    assert.equal(codeSignatureCommand(slice), undefined);
  });

  it('refuses to add LC_CODE_SIGNATURE when the header has no room', () => {
    const bytes = Buffer.from(readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/arm64/u/main')!));
    const slice = parseSlice(bytes);
    // Grow sizeofcmds' neighbour: pretend the first section starts right after the commands.
    const text = findSegment(slice, '__TEXT')!;
    const first = text.sections[0]!;
    const tight = { ...slice, commands: slice.commands.map((c) => (c === text ? { ...text, sections: [{ ...first, offset: 32 + bytes.readUInt32LE(20) + 8 }, ...text.sections.slice(1)] } : c)) };
    rejects(() => withSignatureSpace(tight, codeEnd(tight), 4096), 'macho_no_room');
  });
});

describe('Mach-O parser refuses malformed input', () => {
  it('does not take a Java class file for a fat Mach-O', () => {
    const javaClass = Buffer.from('cafebabe0000003d000a0a000200030700040c000500060100', 'hex');
    assert.equal(isMachO(javaClass), false);
    rejects(() => parseMachO(javaClass), 'macho_invalid');
  });

  it('reports truncated and nonsense headers as macho_invalid', () => {
    rejects(() => parseMachO(Buffer.alloc(4)), 'macho_invalid');
    rejects(() => parseMachO(Buffer.from('cffaedfe0c000001000000000200000010000000ffff0000', 'hex')), 'macho_invalid');
    rejects(() => parseMachO(Buffer.from('7f454c4602010100000000000000000002003e00', 'hex')), 'macho_invalid');
  });

  it('rejects overlapping fat slices and bytes after the last slice', needsSharedFixtures('ios/macho'), () => {
    const bytes = readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/x86_64-arm64/u/main')!);
    rejects(() => parseMachO(Buffer.concat([bytes, Buffer.alloc(16)])), 'macho_invalid');
    const overlap = Buffer.from(bytes);
    overlap.writeUInt32BE(overlap.readUInt32BE(8 + 8), 8 + 20 + 8); // second slice at the first's offset
    rejects(() => parseMachO(overlap), 'macho_invalid');
  });
});
