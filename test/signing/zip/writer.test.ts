import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, rmSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { FileSink, MemorySink, type DataSink } from '../../../src/signing/data-sink.ts';
import { S_IFLNK, ZipReader, ZipWriter } from '../../../src/signing/zip/index.ts';
import { testOutputDir } from '../../support/fixtures.ts';
import { buildZip } from '../../support/zip-builder.ts';
import { openBuffer, readAll, rejectsWith } from './helpers.ts';
import { pythonCheck, unzipTest, zipalignCheck } from './oracles.ts';

const outDir = testOutputDir('zip', 'writer');
mkdirSync(outDir, { recursive: true });
const save = (name: string, bytes: Buffer): string => {
  const file = path.join(outDir, name);
  writeFileSync(file, bytes);
  return file;
};

async function* chunksOf(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

/** A sink without writeAt, like an upload stream: forces data descriptors for streamed entries. */
class AppendOnlySink implements DataSink {
  readonly inner = new MemorySink();
  get position(): number { return this.inner.position; }
  write(data: Buffer): Promise<void> { return this.inner.write(data); }
  close(): Promise<void> { return this.inner.close(); }
}

describe('ZipWriter: new entries', () => {
  test('stored, deflated, streamed, directories, symlinks and modes pass python and unzip', async () => {
    const sink = new MemorySink();
    const w = new ZipWriter(sink);
    const text = Buffer.from('Signet '.repeat(5000));
    const random = Buffer.alloc(200_000);
    for (let i = 0; i < random.length; i++) random.writeUInt8((i * 2654435761) >>> 24, i);
    await w.addEntry('Payload/', Buffer.alloc(0), { unixMode: 0o040755 });
    await w.addEntry('Payload/App.app/Info.plist', text, { unixMode: 0o100644, mtime: new Date(Date.UTC(2024, 5, 1, 10, 20, 30)) });
    await w.addEntry('Payload/App.app/App', random, { method: 'stored', unixMode: 0o100755 });
    await w.addEntry('Payload/App.app/streamed.bin', chunksOf(random, 7000), { unixMode: 0o100644 });
    await w.addEntry('Payload/App.app/streamed-stored.bin', chunksOf(text, 1000), { method: 'stored' });
    await w.addEntry('Payload/App.app/Current', Buffer.from('App'), { method: 'stored', unixMode: 0o120755 });
    await w.addEntry('ünïcode.txt', Buffer.from('x'), { level: 9 });
    const result = await w.finish({ comment: Buffer.from('made by signet') });
    const bytes = sink.toBuffer();
    assert.equal(result.size, bytes.length);

    const zip = await openBuffer(bytes);
    const content = await readAll(zip);
    assert.ok(content.get('Payload/App.app/Info.plist')!.equals(text));
    assert.ok(content.get('Payload/App.app/streamed.bin')!.equals(random));
    assert.ok(content.get('Payload/App.app/streamed-stored.bin')!.equals(text));
    assert.equal(zip.getEntry('Payload/App.app/App')!.unixMode, 0o100755);
    assert.ok(zip.getEntry('Payload/App.app/Current')!.isSymlink);
    assert.ok(zip.getEntry('Payload/')!.isDirectory);
    assert.equal(zip.getEntry('Payload/App.app/streamed.bin')!.flags & 0x08, 0, 'patched header, no data descriptor');
    assert.equal(zip.geometry.comment.toString(), 'made by signet');
    for (const entry of zip.entries) if (entry.method === 0) assert.equal(entry.dataOffset % 4, 0, entry.name);

    const file = save('new-entries.zip', bytes);
    const listing = pythonCheck(file);
    if (listing !== null) {
      assert.match(listing, /Payload\/App\.app\/App 200000 0o100755 3/);
      assert.match(listing, /Payload\/App\.app\/Current 3 0o120755 3/);
    }
    unzipTest(file);
    // unzip restores the symlink and the executable bit.
    const extract = path.join(outDir, 'extracted');
    rmSync(extract, { recursive: true, force: true });
    execFileSync('unzip', ['-q', file, '-d', extract]);
    assert.equal(readlinkSync(path.join(extract, 'Payload/App.app/Current')), 'App');
    assert.equal(statSync(path.join(extract, 'Payload/App.app/App')).mode & 0o777, 0o755);
  });

  test('streamed entries use a data descriptor when the sink cannot overwrite', async () => {
    const sink = new AppendOnlySink();
    const w = new ZipWriter(sink);
    const data = Buffer.from('descriptor '.repeat(1000));
    await w.addEntry('a.txt', chunksOf(data, 333));
    await w.addEntry('b.txt', chunksOf(data, 333), { method: 'stored' });
    await w.finish();
    const bytes = sink.inner.toBuffer();
    const zip = await openBuffer(bytes);
    assert.equal(zip.entries[0]!.dataDescriptorSize, 16);
    assert.ok((await readAll(zip)).get('b.txt')!.equals(data));
    pythonCheck(save('descriptors.zip', bytes));
  });

  test('a provisional head is replaced in place once the data has ended: stored and deflated, CRC made up', async () => {
    const content = Buffer.concat([Buffer.alloc(3000, 7), Buffer.from('code '.repeat(200_000))]);
    const final = Buffer.alloc(3000, 9);
    const expected = Buffer.concat([final, content.subarray(3000)]);
    const sink = new MemorySink();
    const w = new ZipWriter(sink);
    const head = { length: 3000, final: () => final };
    await w.addEntry('stored.bin', chunksOf(content, 64 * 1024), { method: 'stored', provisionalHead: head });
    await w.addEntry('deflated.bin', chunksOf(content, 64 * 1024), { method: 'deflate', pieces: { level: 6 }, provisionalHead: head });
    await w.finish();
    const bytes = sink.toBuffer();
    // The reader checks each entry's CRC-32 and size against its content.
    const files = await readAll(await openBuffer(bytes));
    assert.ok(files.get('stored.bin')!.equals(expected));
    assert.ok(files.get('deflated.bin')!.equals(expected));
    unzipTest(save('provisional-head.zip', bytes));
    // What cannot be patched, or a head of another length, is refused.
    await assert.rejects(new ZipWriter(new AppendOnlySink()).addEntry('x', chunksOf(content, 1000), { method: 'stored', provisionalHead: head }), RangeError);
    await assert.rejects(new ZipWriter(new MemorySink()).addEntry('x', chunksOf(content, 1000), { method: 'deflate', provisionalHead: head }), RangeError);
    await assert.rejects(new ZipWriter(new MemorySink()).addEntry('x', chunksOf(content, 1000), { method: 'stored', provisionalHead: { length: 3000, final: () => Buffer.alloc(10) } }), RangeError);
  });

  test('output is deterministic', async () => {
    const make = async (): Promise<Buffer> => {
      const sink = new MemorySink();
      const w = new ZipWriter(sink);
      await w.addEntry('a', Buffer.from('same'), {});
      await w.addEntry('lib/x86/libfoo.so', Buffer.alloc(100, 1), { method: 'stored' });
      await w.finish();
      return sink.toBuffer();
    };
    assert.ok((await make()).equals(await make()));
  });

  test('refuses duplicate and unsafe names', async () => {
    const w = new ZipWriter(new MemorySink());
    await w.addEntry('a/b', Buffer.from('1'));
    await rejectsWith(w.addEntry('a/./b', Buffer.from('2')), 'zip_duplicate_entry');
    await rejectsWith(w.addEntry('../x', Buffer.from('2')), 'zip_unsafe_entry');
  });

  test('a refusal before writing leaves the writer usable; a failure mid-entry does not', async () => {
    const w = new ZipWriter(new MemorySink(), { allowZip64: false });
    await rejectsWith(w.addEntry('big', Buffer.from('1'), { forceZip64: true }), 'zip_unsupported');
    await w.addEntry('big', Buffer.from('1'));
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('partial');
      throw new Error('upload aborted');
    }
    await assert.rejects(w.addEntry('stream', failing(), { method: 'stored' }), /upload aborted/);
    await assert.rejects(w.addEntry('next', Buffer.from('x')), /earlier write failed/);
    assert.throws(() => w.finishEntries(), /earlier write failed/);
  });
});

describe('ZipWriter: alignment', () => {
  test('stored entries on 4 bytes, stored .so on 16 KiB by default and 4 KiB on request', async () => {
    for (const page of [16384, 4096]) {
      const sink = new MemorySink();
      const w = new ZipWriter(sink, { allowZip64: false, alignment: { libraryPageAlignment: page } });
      await w.addEntry('classes.dex', Buffer.from('dex\n035'), {});
      await w.addEntry('resources.arsc', Buffer.alloc(1001, 2), { method: 'stored' });
      await w.addEntry('lib/arm64-v8a/libapp.so', Buffer.alloc(5000, 3), { method: 'stored' });
      await w.addEntry('odd', Buffer.alloc(3, 4), { method: 'stored' });
      await w.addEntry('lib/x86/libother.so', Buffer.alloc(10, 5), { method: 'stored' });
      await w.finish();
      const bytes = sink.toBuffer();
      const zip = await openBuffer(bytes);
      for (const entry of zip.entries.filter((e) => e.method === 0)) {
        const want = entry.name.endsWith('.so') ? page : 4;
        assert.equal(entry.dataOffset % want, 0, `${entry.name} at ${entry.dataOffset} (page ${page})`);
        // apksig's 0xD935 field carries the alignment it was padded to.
        assert.equal(entry.localExtra.readUInt16LE(0), 0xd935);
        assert.equal(entry.localExtra.readUInt16LE(4), want);
      }
      const file = save(`aligned-${page}.apk`, bytes);
      zipalignCheck(file);
      unzipTest(file);
    }
  });
});

describe('ZipWriter: raw copy', () => {
  test('read -> raw copy -> read gives the same entries, and an identical file at the same offsets', async () => {
    const built = buildZip([
      { name: 'dir/', method: 0, externalAttributes: (0o040755 << 16) | 0x10 },
      { name: 'dir/a.txt', data: 'alpha '.repeat(300), dataDescriptor: 'signed' },
      { name: 'link', data: 'dir/a.txt', method: 0, externalAttributes: (0o120777 << 16) >>> 0, versionMadeBy: 0x031e },
      { name: 'b.bin', data: Buffer.alloc(3000, 9), method: 0 },
    ], { comment: 'keep me' });
    const input = await openBuffer(built.bytes);

    // Verbatim: same offsets, descriptors kept -> byte-identical archive.
    const same = new MemorySink();
    const w1 = new ZipWriter(same);
    for (const entry of input.entriesInFileOrder()) await w1.addRaw(entry, input, { dataDescriptor: 'keep' });
    await w1.finish({ comment: input.geometry.comment });
    assert.ok(same.toBuffer().equals(built.bytes));

    // Shifted by a leading entry, descriptors dropped, forced alignment.
    const moved = new MemorySink();
    const w2 = new ZipWriter(moved);
    await w2.addEntry('first.txt', Buffer.from('shift everything by an odd amount'));
    for (const entry of input.entries) await w2.addRaw(entry, input, { alignment: 'force' });
    await w2.finish();
    const output = await openBuffer(moved.toBuffer());
    const before = await readAll(input);
    const after = await readAll(output);
    for (const entry of input.entries) {
      const copy = output.getEntry(entry.name)!;
      assert.ok(after.get(entry.name)!.equals(before.get(entry.name)!), entry.name);
      assert.equal(copy.externalAttributes, entry.externalAttributes);
      assert.equal(copy.versionMadeBy, entry.versionMadeBy);
      assert.equal(copy.crc32, entry.crc32);
      assert.equal(copy.flags & 0x08, 0);
      assert.equal(copy.dataDescriptorSize, 0);
      if (copy.method === 0) assert.equal(copy.dataOffset % 4, 0);
    }
    assert.ok(output.getEntry('link')!.isSymlink);
    assert.equal(output.getEntry('link')!.unixMode! & 0o170000, S_IFLNK);
    const file = save('raw-copy.zip', moved.toBuffer());
    pythonCheck(file);
    unzipTest(file);
  });

  test("replacing an entry's content keeps its metadata (metadataFrom)", async () => {
    const built = buildZip([
      { name: 'Payload/A.app/A', data: 'old binary', method: 0, externalAttributes: (0o100755 << 16) >>> 0, versionMadeBy: 0x0315, dosTime: 0x7000, dosDate: 0x5b21 },
      { name: 'Payload/A.app/Info.plist', data: 'old plist', externalAttributes: (0o100644 << 16) >>> 0 },
    ]);
    const input = await openBuffer(built.bytes);
    const sink = new MemorySink();
    const w = new ZipWriter(sink);
    for (const entry of input.entries) {
      await w.addEntry(entry.name, Buffer.from(`new ${entry.name}`), { metadataFrom: entry });
    }
    await w.finish();
    const output = await openBuffer(sink.toBuffer());
    for (const entry of input.entries) {
      const replaced = output.getEntry(entry.name)!;
      assert.deepEqual(
        [replaced.versionMadeBy, replaced.externalAttributes, replaced.dosTime, replaced.dosDate, replaced.method],
        [entry.versionMadeBy, entry.externalAttributes, entry.dosTime, entry.dosDate, entry.method],
      );
      assert.equal((await output.readEntry(replaced, 100)).toString(), `new ${entry.name}`);
    }
  });

  test('file sink output equals memory sink output', async () => {
    const built = buildZip([{ name: 'a', data: 'x'.repeat(5000) }, { name: 'b', data: 'y', method: 0 }]);
    const input = await openBuffer(built.bytes);
    const file = path.join(outDir, 'file-sink.zip');
    const fileSink = await FileSink.create(file, { bufferSize: 64 });
    const memory = new MemorySink();
    for (const sink of [fileSink, memory]) {
      const w = new ZipWriter(sink);
      await w.addEntry('streamed', chunksOf(Buffer.alloc(1000, 7), 100));
      for (const entry of input.entries) await w.addRaw(entry, input);
      await w.finish();
    }
    await fileSink.close();
    assert.ok(readFileSync(file).equals(memory.toBuffer()));
  });
});

describe('ZipWriter: central directory tail and signing block insertion', () => {
  test('finishEntries + writeTail put bytes before the CD and fix the EOCD offset', async () => {
    const sink = new MemorySink();
    const w = new ZipWriter(sink, { allowZip64: false });
    const a = await w.addEntry('a', Buffer.from('first'));
    const b = await w.addEntry('b', Buffer.from('second'));
    const plan = w.finishEntries({ order: [b, a], comment: Buffer.from('c') });
    const digestEocd = plan.endRecords(plan.entriesEnd);
    assert.equal(digestEocd.readUInt32LE(16), plan.entriesEnd);
    const block = Buffer.alloc(4096, 0x42);
    const result = await w.writeTail(block);
    const bytes = sink.toBuffer();
    assert.equal(result.centralDirectoryOffset, plan.entriesEnd + 4096);
    assert.ok(bytes.subarray(result.centralDirectoryOffset, result.centralDirectoryOffset + plan.centralDirectory.length).equals(plan.centralDirectory));
    // The written EOCD differs from the digested one only in the CD offset.
    const written = bytes.subarray(result.eocdOffset);
    assert.equal(written.readUInt32LE(16), result.centralDirectoryOffset);
    assert.ok(Buffer.concat([written.subarray(0, 16), written.subarray(20)]).equals(Buffer.concat([digestEocd.subarray(0, 16), digestEocd.subarray(20)])));
    const zip = await openBuffer(bytes);
    assert.deepEqual(zip.entries.map((e) => e.name), ['b', 'a']);
    assert.equal(zip.geometry.bytesBeforeCentralDirectory, 4096);
    assert.throws(() => w.finishEntries(), /already finished/);
  });
});

describe('ZipWriter: Zip64', () => {
  test('more than 65535 entries', async () => {
    const sink = new MemorySink();
    const w = new ZipWriter(sink);
    const empty = Buffer.alloc(0);
    for (let i = 0; i < 70_000; i++) await w.addEntry(`f/${i}`, empty, { method: 'stored', alignment: 1 });
    await w.finish();
    const bytes = sink.toBuffer();
    const zip = await openBuffer(bytes);
    assert.equal(zip.entries.length, 70_000);
    assert.notEqual(zip.geometry.zip64EocdOffset, null);
    assert.equal(bytes.readUInt16LE(zip.geometry.eocdOffset + 10), 0xffff);
    const file = save('many.zip', bytes);
    const listing = pythonCheck(file);
    if (listing !== null) assert.equal(listing.trimEnd().split('\n').length, 70_000);
    unzipTest(file);
  });

  test('refused when Zip64 is not allowed (APKs)', async () => {
    const w = new ZipWriter(new MemorySink(), { allowZip64: false });
    for (let i = 0; i < 65_535; i++) await w.addEntry(`f${i}`, Buffer.alloc(0), { method: 'stored', alignment: 1 });
    await rejectsWith(w.finish(), 'zip_unsupported', /Zip64/);
    await rejectsWith(new ZipWriter(new MemorySink(), { allowZip64: false }).addEntry('x', Buffer.from('1'), { forceZip64: true }), 'zip_unsupported');
  });

  test('forced Zip64 extra fields on a small entry, raw-copied again', async () => {
    const sink = new MemorySink();
    const w = new ZipWriter(sink);
    await w.addEntry('small.txt', Buffer.from('tiny but zip64'), { forceZip64: true });
    await w.addEntry('streamed.txt', chunksOf(Buffer.from('streamed zip64 '.repeat(100)), 50), { forceZip64: true });
    await w.finish();
    const zip = await openBuffer(sink.toBuffer());
    assert.ok(zip.entries.every((e) => e.zip64));
    assert.equal((await readAll(zip)).get('small.txt')!.toString(), 'tiny but zip64');
    const file = save('forced-zip64.zip', sink.toBuffer());
    pythonCheck(file);
    unzipTest(file);

    const again = new MemorySink();
    const w2 = new ZipWriter(again);
    await w2.addEntry('shift', Buffer.from('12345'));
    for (const entry of zip.entries) await w2.addRaw(entry, zip);
    await w2.finish();
    const copy = await openBuffer(again.toBuffer());
    assert.equal((await readAll(copy)).get('streamed.txt')!.toString(), 'streamed zip64 '.repeat(100));
    pythonCheck(save('forced-zip64-copy.zip', again.toBuffer()));
  });
});

test('BufferSource round trip through ZipReader.open', async () => {
  const sink = new MemorySink();
  const w = new ZipWriter(sink);
  await w.addEntry('x', Buffer.from('y'));
  await w.finish();
  const zip = await ZipReader.open(new BufferSource(sink.toBuffer()));
  assert.equal(zip.entries.length, 1);
});
