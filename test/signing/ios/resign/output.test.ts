// Rewritten entries: pieces deflated in parallel or written as hand-made stored blocks must form
// one valid deflate stream (checked by Info-ZIP's `unzip -t` and zlib), and the method/level
// follows what the input's own deflate achieved.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { compressLargeEntry, entryStyle, writeLargeEntry } from '../../../../src/signing/ios/resign/output.ts';
import { ZipReader, ZipWriter, type ZipEntry } from '../../../../src/signing/zip/index.ts';
import { testOutputDir } from '../../../support/fixtures.ts';

describe('rewritten entries', () => {
  it('mixes zlib pieces and stored blocks into one valid deflate stream', async () => {
    // 1 MiB pieces: zeros (deflated); 16 KiB of zeros then random bytes, like a Mach-O header's
    // padding before encrypted code (its middle does not shrink: stored whole); x's (deflated);
    // a final random piece (stored).
    const MiB = 1024 * 1024;
    const data = Buffer.concat([Buffer.alloc(MiB), Buffer.alloc(16 * 1024), randomBytes(MiB - 16 * 1024), Buffer.from('x'.repeat(MiB)), randomBytes(200_001)]);
    const sink = new MemorySink();
    const writer = new ZipWriter(sink);
    const style = { method: 'deflate' as const, attributes: { unixMode: 0o100755, mtime: new Date('2026-01-01T00:00:00Z') } };
    const compressed = await compressLargeEntry('Payload/A.app/A', [data.subarray(0, 1234), data.subarray(1234)], data.length, crc32(data), style, 6);
    await writeLargeEntry(writer, 'Payload/A.app/A', compressed, style);
    await writer.finish();
    const zip = await ZipReader.open(new BufferSource(sink.toBuffer()));
    const entry = zip.getEntry('Payload/A.app/A')!;
    assert.ok((await zip.readEntry(entry, 1 << 24)).equals(data));
    // The second and last pieces are stored (plus 5 bytes per 64 KiB block); the others shrink to a few KB.
    const stored = MiB + 200_001 + 5 * (16 + 4);
    assert.ok(entry.compressedSize > stored && entry.compressedSize < stored + 10_000, String(entry.compressedSize));
    // Stored, not deflated (which random bytes barely change in size): its bytes appear as they are.
    const raw = sink.toBuffer().subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
    assert.ok(raw.includes(data.subarray(MiB + 17_000, MiB + 65_000)), 'the piece behind the padding was deflated');
    const dir = testOutputDir('ios-output');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'pieces.zip');
    writeFileSync(file, sink.toBuffer());
    const test = spawnSync('unzip', ['-t', file], { encoding: 'utf8' });
    assert.equal(test.status, 0, test.stdout + test.stderr);
    assert.match(test.stdout, /No errors detected/);
  });

  it('chooses stored, level 1 or the default level from the input entry', () => {
    const entry = (method: number, compressedSize: number, uncompressedSize = 1000): ZipEntry =>
      ({ method, compressedSize, uncompressedSize, externalAttributes: 0o100755 << 16, versionMadeBy: 0x031e, dosTime: 1, dosDate: 2 }) as ZipEntry;
    const time = new Date(0);
    assert.equal(entryStyle(entry(0, 1000), time).method, 'stored');
    assert.equal(entryStyle(entry(8, 998), time).method, 'stored'); // saved 0.2 %
    assert.deepEqual([entryStyle(entry(8, 980), time).method, entryStyle(entry(8, 980), time).level], ['deflate', 1]); // saved 2 %
    assert.deepEqual([entryStyle(entry(8, 500), time).method, entryStyle(entry(8, 500), time).level], ['deflate', undefined]);
    assert.deepEqual(entryStyle(undefined, time), { method: 'deflate', attributes: { unixMode: 0o100644, mtime: time } });
    assert.deepEqual(entryStyle(entry(8, 500), time).attributes, { externalAttributes: 0o100755 << 16, versionMadeBy: 0x031e, dosTime: 1, dosDate: 2 });
  });
});
