import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, symlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { BufferSource, FileSource, type DataSource } from '../../../src/signing/data-source.ts';
import { ZipReader, S_IFLNK, dosToDate, parseExtraFields, parseUnixExtras } from '../../../src/signing/zip/index.ts';
import { sharedFixture, needsSharedFixtures, testOutputDir } from '../../support/fixtures.ts';
import { buildZip } from '../../support/zip-builder.ts';
import { openBuffer, readAll, rejectsWith } from './helpers.ts';

describe('ZipReader on built archives', () => {
  test('reads names, sizes, methods, modes and content', async () => {
    const big = Buffer.alloc(300_000, 'abcdefghij');
    const built = buildZip([
      { name: 'dir/', data: '', method: 0, externalAttributes: (0o040755 << 16) | 0x10 },
      { name: 'dir/stored.txt', data: 'hello', method: 0 },
      { name: 'dir/big.bin', data: big, method: 8 },
      { name: 'link', data: 'dir/stored.txt', method: 0, externalAttributes: (0o120777 << 16) >>> 0 },
      { name: 'exec.sh', data: '#!/bin/sh\n', method: 8, externalAttributes: (0o100755 << 16) >>> 0 },
    ], { comment: 'a comment' });
    const zip = await openBuffer(built.bytes);
    assert.deepEqual(zip.entries.map((e) => e.name), ['dir/', 'dir/stored.txt', 'dir/big.bin', 'link', 'exec.sh']);
    const [dir, stored, bigEntry, link, exec] = zip.entries;
    assert.ok(dir!.isDirectory && !dir!.isSymlink);
    assert.equal(stored!.method, 0);
    assert.equal(stored!.dataOffset, built.dataOffsets[1]);
    assert.equal(bigEntry!.uncompressedSize, big.length);
    assert.ok(bigEntry!.compressedSize < big.length);
    assert.ok(link!.isSymlink);
    assert.equal(link!.unixMode! & 0o170000, S_IFLNK);
    assert.equal(exec!.unixMode, 0o100755);
    assert.equal(zip.geometry.comment.toString(), 'a comment');
    assert.equal(zip.geometry.centralDirectoryOffset, built.cdOffset);
    assert.equal(zip.geometry.eocdOffset, built.eocdOffset);
    assert.equal(zip.geometry.bytesBeforeCentralDirectory, 0);
    assert.deepEqual(dosToDate(stored!.dosDate, stored!.dosTime), new Date(Date.UTC(2025, 0, 1, 12, 0, 0)));
    const content = await readAll(zip);
    assert.ok(content.get('dir/big.bin')!.equals(big));
    assert.equal((await zip.readEntry(stored!, 100)).toString(), 'hello');
    assert.equal((await zip.readEntry(stored!)).toString(), 'hello');
    assert.equal((await zip.readEntry(link!, 100)).toString(), 'dir/stored.txt');
    const raw: Buffer[] = [];
    for await (const chunk of zip.rawChunks(bigEntry!, 1000)) { assert.ok(chunk.length <= 1000); raw.push(chunk); }
    assert.equal(Buffer.concat(raw).length, bigEntry!.compressedSize);
    assert.equal(zip.getEntry('exec.sh'), exec);
  });

  test('decodes flagged UTF-8, unflagged UTF-8 and CP437 names', async () => {
    const built = buildZip([
      { name: 'ünïcode-flagged', flags: 0x0800 },
      { name: 'ünïcode-unflagged', flags: 0 },
      { name: Buffer.from([0x80, 0x81, 0x2e, 0x74]), flags: 0 },
    ]);
    const zip = await openBuffer(built.bytes);
    assert.deepEqual(zip.entries.map((e) => e.name), ['ünïcode-flagged', 'ünïcode-unflagged', 'Çü.t']);
    await rejectsWith(openBuffer(buildZip([{ name: Buffer.from([0x80, 0x41]), flags: 0x0800 }]).bytes), 'zip_invalid', /UTF-8/);
  });

  test('data descriptors, signed and unsigned, are measured and checked', async () => {
    const built = buildZip([
      { name: 'a', data: 'alpha'.repeat(100), dataDescriptor: 'signed' },
      { name: 'b', data: 'beta', method: 0, dataDescriptor: 'unsigned' },
      { name: 'c', data: 'gamma' },
    ]);
    const zip = await openBuffer(built.bytes);
    assert.equal(zip.entries[0]!.dataDescriptorSize, 16);
    assert.equal(zip.entries[1]!.dataDescriptorSize, 12);
    assert.equal(zip.entries[1]!.endOffset, built.localHeaderOffsets[2]);
    assert.equal((await readAll(zip)).get('a')!.toString(), 'alpha'.repeat(100));
  });

  test('Zip64 extra fields and Zip64 end records on a small archive', async () => {
    const built = buildZip([{ name: 'x.txt', data: 'zip64 payload', zip64: true }, { name: 'y', data: 'plain' }], { zip64Eocd: true });
    const zip = await openBuffer(built.bytes);
    const x = zip.entries[0]!;
    assert.ok(x.zip64);
    assert.equal(x.uncompressedSize, 13);
    assert.equal(x.localHeaderOffset, 0);
    assert.notEqual(zip.geometry.zip64EocdOffset, null);
    assert.equal((await readAll(zip)).get('x.txt')!.toString(), 'zip64 payload');
  });

  test('exposes bytes between the last entry and the central directory', async () => {
    const block = Buffer.alloc(4096, 7);
    const built = buildZip([{ name: 'a', data: 'x' }], { beforeCentralDirectory: block });
    const zip = await openBuffer(built.bytes);
    assert.equal(zip.geometry.bytesBeforeCentralDirectory, 4096);
    assert.equal(zip.geometry.entriesEnd + 4096, zip.geometry.centralDirectoryOffset);
  });

  test('streams: Readable views, early exit, and Readable raw bytes', async () => {
    const data = Buffer.alloc(500_000);
    for (let i = 0; i < data.length; i++) data.writeUInt8((i * 7919) & 0xff, i);
    const zip = await openBuffer(buildZip([{ name: 'd', data }, { name: 's', data, method: 0 }]).bytes);
    for (const entry of zip.entries) {
      const chunks: Buffer[] = [];
      for await (const chunk of zip.openContentStream(entry)) chunks.push(chunk as Buffer);
      assert.ok(Buffer.concat(chunks).equals(data));
      const raw: Buffer[] = [];
      for await (const chunk of zip.openRawStream(entry)) raw.push(chunk as Buffer);
      assert.equal(Buffer.concat(raw).length, entry.compressedSize);
      // Stopping after the first chunk releases the inflater without hanging or throwing.
      for await (const chunk of zip.contentChunks(entry)) { assert.ok(chunk.length > 0); break; }
    }
  });

  test('opening reads the headers, not the data between them', async () => {
    // Medium entries (the images of a large app): their headers are 48 KiB apart.
    const entries = Array.from({ length: 40 }, (_, i) => ({ name: `res/img_${i}.png`, data: randomBytes(48 * 1024), method: 0 }));
    const { bytes } = buildZip([...entries, ...Array.from({ length: 40 }, (_, i) => ({ name: `res/layout/s${i}.xml`, data: `<a id="${i}"/>`, method: 8 }))]);
    let read = 0;
    const source = new BufferSource(bytes);
    const counting: DataSource = { size: source.size, close: () => source.close(), read: (offset, length) => { read += length; return source.read(offset, length); } };
    const zip = await ZipReader.open(counting);
    assert.equal(zip.entries.length, 80);
    // The central directory, the EoCD search and 80 headers: a few KiB each, not 40 images.
    assert.ok(read < 256 * 1024, `read ${read} bytes of ${bytes.length}`);
  });

  test('empty archive', async () => {
    const zip = await openBuffer(buildZip([]).bytes);
    assert.equal(zip.entries.length, 0);
    assert.equal(zip.geometry.entriesEnd, 0);
  });
});

describe('ZipReader against external tools', () => {
  test('reads a zip made by Info-ZIP with a symlink, modes and directories', async (t) => {
    const dir = testOutputDir('zip', 'infozip');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(path.join(dir, 'tree', 'Payload', 'App.app'), { recursive: true });
    writeFileSync(path.join(dir, 'tree', 'Payload', 'App.app', 'Info.plist'), '<plist/>'.repeat(50));
    writeFileSync(path.join(dir, 'tree', 'Payload', 'App.app', 'run'), '#!/bin/sh\n', { mode: 0o755 });
    symlinkSync('run', path.join(dir, 'tree', 'Payload', 'App.app', 'alias'));
    try {
      execFileSync('zip', ['-q', '-r', '-y', '../out.zip', 'Payload'], { cwd: path.join(dir, 'tree') });
    } catch {
      t.skip('Info-ZIP zip is not installed');
      return;
    }
    const source = await FileSource.open(path.join(dir, 'out.zip'));
    try {
      const zip = await ZipReader.open(source);
      const alias = zip.getEntry('Payload/App.app/alias')!;
      assert.ok(alias.isSymlink);
      assert.equal((await zip.readEntry(alias, 64)).toString(), 'run');
      assert.equal(zip.getEntry('Payload/App.app/run')!.unixMode! & 0o777, 0o755);
      assert.ok(zip.getEntry('Payload/')!.isDirectory);
      assert.equal((await zip.readEntry(zip.getEntry('Payload/App.app/Info.plist')!, 1000)).toString(), '<plist/>'.repeat(50));
      // Info-ZIP writes 0x5455 (mtime) in both headers and 0x7875 (uid/gid) in the local one.
      const run = zip.getEntry('Payload/App.app/run')!;
      const central = parseUnixExtras(run.centralExtraFields);
      const local = parseUnixExtras(parseExtraFields(run.localExtra).fields);
      assert.ok(central.mtime !== null && Math.abs(central.mtime - Date.now() / 1000) < 3600);
      if (process.getuid) assert.equal(local.uid, process.getuid());
    } finally {
      await source.close();
    }
  });
});

describe('ZipReader on the shared fixture corpus', needsSharedFixtures(), () => {
  const open = async (rel: string): Promise<{ zip: ZipReader; close: () => Promise<void> }> => {
    const source = await FileSource.open(sharedFixture(rel)!);
    try {
      return { zip: await ZipReader.open(source), close: () => source.close() };
    } catch (error) {
      await source.close();
      throw error;
    }
  };

  test('golden aligned APK: entries, alignment field and signing-block room', async () => {
    const { zip, close } = await open('android/apksig/golden/golden-aligned-v1v2v3-out.apk');
    try {
      const so = zip.entries.find((e) => e.name.endsWith('.so'))!;
      assert.equal(so.method, 0);
      assert.equal(so.dataOffset % 4096, 0);
      assert.equal(so.localExtra.readUInt16LE(0), 0xd935);
      // §4 of the research notes: block at 8192, 4096 bytes long, CD at 12288.
      assert.equal(zip.geometry.centralDirectoryOffset, 12288);
      assert.equal(zip.geometry.entriesEnd + zip.geometry.bytesBeforeCentralDirectory, 12288);
      assert.ok(zip.geometry.entriesEnd <= 8192);
      const manifest = zip.getEntry('AndroidManifest.xml')!;
      assert.equal((await zip.readEntry(manifest, 1 << 20)).readUInt16LE(0), 0x0003);
    } finally {
      await close();
    }
  });

  test('every fixture APK, AAB and IPA parses and inflates with valid CRCs', async () => {
    const files = [
      'android/apksig/golden/original.apk', 'android/apksig/golden/golden-unaligned-in.apk', 'android/aab/app-release-bundle.aab',
      'android/aab/sample.aab', 'ios/fastlane/ipas/very-capable-app.ipa', 'ios/fastlane/ipas/ContainsWatchApp.ipa', 'ios/fastlane/ipas/iOSAppOnly.ipa',
    ];
    for (const rel of files) {
      const { zip, close } = await open(rel);
      try {
        assert.ok(zip.entries.length > 0, rel);
        await readAll(zip);
      } finally {
        await close();
      }
    }
  });

  test('negative fixtures fail with their own codes', async () => {
    await rejectsWith(open('android/apksig/negative/v1-only-with-lf-in-entry-name.apk'), 'zip_unsafe_entry', /control character/);
    await rejectsWith(open('android/apksig/negative/v2-only-truncated-cd.apk'), 'zip_invalid', /central directory/);
    await rejectsWith(open('ios/fastlane/ipas/not-an-ipa.ipa'), 'zip_invalid');
  });

  test('python3 zipfile agrees on every entry of every fixture archive', async (t) => {
    const root = sharedFixture('')!;
    const archives = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(apk|ipa|aab)$/.test(f)).sort();
    // Refused on purpose (see "negative fixtures" above); python lists them anyway.
    const refused = new Set(['android/apksig/negative/v1-only-with-lf-in-entry-name.apk', 'android/apksig/negative/v2-only-truncated-cd.apk', 'ios/fastlane/ipas/not-an-ipa.ipa']);
    // One python process lists every archive (a process per file costs seconds on a busy machine).
    const script = [
      'import sys, zipfile, json',
      'out = {}',
      'for p in sys.argv[1:]:',
      '    out[p] = [f"{i.filename} {i.file_size} {i.compress_size} {i.header_offset} {i.CRC} {i.external_attr}" for i in zipfile.ZipFile(p).infolist()]',
      'print(json.dumps(out))',
    ].join('\n');
    const wanted = archives.filter((rel) => !refused.has(rel));
    let listings: Record<string, string[]>;
    try {
      listings = JSON.parse(execFileSync('python3', ['-c', script, ...wanted.map((rel) => path.join(root, rel))], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as Record<string, string[]>;
    } catch {
      t.skip('python3 is not available');
      return;
    }
    let compared = 0;
    for (const rel of wanted) {
      const { zip, close } = await open(rel);
      try {
        const ours = zip.entries.map((e) => `${e.name} ${e.uncompressedSize} ${e.compressedSize} ${e.localHeaderOffset} ${e.crc32} ${e.externalAttributes}`);
        assert.deepEqual(ours, listings[path.join(root, rel)], rel);
        compared++;
      } finally {
        await close();
      }
    }
    assert.ok(compared > 40, `compared ${compared} archives`);
  });
});
