// Raw copy + alignment must reproduce apksig byte for byte: for each golden input/output pair,
// copying the entries apksig kept (in file order, gaps included, 'preserve' alignment,
// descriptors kept, 4 KiB pages as in apksig <= 34) must give exactly the output's bytes up to
// the end of the last kept entry, and the same central directory records.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { MemorySink } from '../../../src/signing/data-sink.ts';
import { ZipWriter, type ZipEntry, type ZipReader } from '../../../src/signing/zip/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { openBuffer } from './helpers.ts';

const golden = (name: string): Buffer => readFileSync(sharedFixture(`android/apksig/golden/${name}`)!);

// apksig V1SchemeSigner: MANIFEST.MF and signature files are regenerated, never copied.
const V1_FILE = /^META-INF\/(MANIFEST\.MF|[^/]+\.(SF|RSA|DSA|EC)|SIG-[^/]*)$/i;

/** Entries apksig copied from input to output: present with the same CRC, and not a v1 file. */
function kept(input: ZipReader, output: ZipReader): ZipEntry[] {
  return input.entriesInFileOrder().filter((entry) => {
    if (V1_FILE.test(entry.name)) return false;
    const out = output.getEntry(entry.name);
    return out !== undefined && out.crc32 === entry.crc32 && out.compressedSize === entry.compressedSize;
  });
}

describe('apksig parity of raw copy and alignment', needsSharedFixtures(), () => {
  const pairs: [string, string][] = [
    ['golden-aligned-in.apk', 'golden-aligned-v2-out.apk'],
    ['golden-aligned-in.apk', 'golden-aligned-v1v2v3-out.apk'],
    ['golden-unaligned-in.apk', 'golden-unaligned-v2-out.apk'],
    ['golden-unaligned-in.apk', 'golden-unaligned-v1v2v3-out.apk'],
    ['original.apk', 'golden-rsa-out.apk'],
  ];
  for (const [inputName, outputName] of pairs) {
    test(`${inputName} -> ${outputName}`, async () => {
      const input = await openBuffer(golden(inputName));
      const expectedBytes = golden(outputName);
      const expected = await openBuffer(expectedBytes);
      const sink = new MemorySink();
      const writer = new ZipWriter(sink, { allowZip64: false, alignment: { libraryPageAlignment: 4096 } });
      const keep = new Set(kept(input, expected));
      let inputOffset = 0;
      let lastEnd = 0;
      for (const entry of input.entriesInFileOrder()) {
        if (keep.has(entry)) {
          // apksig ApkSigner.sign step 5: bytes between records are copied verbatim.
          if (entry.localHeaderOffset > inputOffset) await writer.copyBytes(input.source, inputOffset, entry.localHeaderOffset - inputOffset);
          const written = await writer.addRaw(entry, input, { alignment: 'preserve', dataDescriptor: 'keep' });
          assert.ok(written.centralRecord.equals(expected.getEntry(entry.name)!.centralRecord), `central record of ${entry.name}`);
          lastEnd = sink.position;
        }
        inputOffset = entry.endOffset;
      }
      assert.ok(keep.size >= 3);
      assert.ok(sink.toBuffer().subarray(0, lastEnd).equals(expectedBytes.subarray(0, lastEnd)));
    });
  }
});
