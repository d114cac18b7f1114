// Malformed, hostile and unsupported archives: each gets its own SigningError code.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { buildZip, type BuildEntry } from '../../support/zip-builder.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { duplicateKey } from '../../../src/signing/zip/names.ts';
import { openBuffer, readAll, rejectsWith } from './helpers.ts';

const zipOf = (entries: BuildEntry[]): Buffer => buildZip(entries).bytes;

describe('structure (zip_invalid)', () => {
  const good = buildZip([{ name: 'a.txt', data: 'hello world' }, { name: 'b.txt', data: 'bye' }]);

  test('truncated file and missing end record', async () => {
    await rejectsWith(openBuffer(Buffer.alloc(10)), 'zip_invalid', /too short/);
    await rejectsWith(openBuffer(good.bytes.subarray(0, good.bytes.length - 1)), 'zip_invalid', /end of central directory/);
    await rejectsWith(openBuffer(Buffer.concat([good.bytes, Buffer.from('trailing')])), 'zip_invalid', /end of central directory/);
  });

  test('central directory out of bounds, miscounted or with leftovers', async () => {
    await rejectsWith(openBuffer(buildZip([{ name: 'a' }], { eocd: { cdOffset: 1_000_000 } }).bytes), 'zip_invalid', /runs past/);
    await rejectsWith(openBuffer(buildZip([{ name: 'a' }, { name: 'b' }], { eocd: { entryCount: 1 } }).bytes), 'zip_invalid', /left over/);
    await rejectsWith(openBuffer(buildZip([{ name: 'a' }], { eocd: { entryCount: 3 } }).bytes), 'zip_invalid', /cannot hold|runs past/);
    await rejectsWith(openBuffer(buildZip([{ name: 'a' }], { cdTrailing: Buffer.alloc(8) }).bytes), 'zip_invalid', /left over/);
    await rejectsWith(openBuffer(buildZip([{ name: 'a' }], { eocd: { cdOffset: 1 } }).bytes), 'zip_invalid', /signature/);
  });

  test("readNames holds the directory to the same structure and gives open's names", async () => {
    const names = (bytes: Buffer) => ZipReader.readNames(new BufferSource(bytes));
    await rejectsWith(names(buildZip([{ name: 'a' }], { eocd: { cdOffset: 1_000_000 } }).bytes), 'zip_invalid', /runs past/);
    await rejectsWith(names(buildZip([{ name: 'a' }, { name: 'b' }], { eocd: { entryCount: 1 } }).bytes), 'zip_invalid', /left over/);
    await rejectsWith(names(buildZip([{ name: 'a' }], { cdTrailing: Buffer.alloc(8) }).bytes), 'zip_invalid', /left over/);
    await rejectsWith(names(buildZip([{ name: 'a' }], { eocd: { cdOffset: 1 } }).bytes), 'zip_invalid', /signature/);
    await rejectsWith(names(good.bytes.subarray(0, good.bytes.length - 1)), 'zip_invalid', /end of central directory/);
    // Flagged UTF-8 that is not, an unflagged CP437 name, and a plain one: decoded as open decodes them.
    const odd = zipOf([{ name: 'plain.txt' }, { name: 'caf\u00e9.txt' }, { name: Buffer.from([0x63, 0x82, 0x2e, 0x74]), flags: 0 }]);
    assert.deepEqual(await names(odd), ['plain.txt', 'caf\u00e9.txt', 'c\u00e9.t']);
    assert.deepEqual(await names(odd), (await openBuffer(odd)).entries.map((e) => e.name));
    await rejectsWith(names(zipOf([{ name: Buffer.from([0x61, 0xff, 0xfe]) }])), 'zip_invalid', /not valid UTF-8/);
  });

  test('local header that is missing or disagrees with the central directory', async () => {
    const bytes = Buffer.from(good.bytes);
    bytes.writeUInt32LE(0, good.localHeaderOffsets[1]!);
    await rejectsWith(openBuffer(bytes), 'zip_invalid', /no signature/);
    await rejectsWith(openBuffer(zipOf([{ name: 'a.txt', localName: 'b.txt' }])), 'zip_invalid', /different entry/);
    await rejectsWith(openBuffer(zipOf([{ name: 'a.txt', localMethod: 0 }])), 'zip_invalid', /compression method/);
    await rejectsWith(openBuffer(zipOf([{ name: 'a.txt', data: 'x', crc32: 1234 }])), 'zip_invalid', /CRC-32 or sizes/);
  });

  test('data descriptor that disagrees with the central directory', async () => {
    const built = buildZip([{ name: 'a', data: 'abc', dataDescriptor: 'signed' }, { name: 'b' }]);
    const bytes = Buffer.from(built.bytes);
    bytes.writeUInt32LE(0xdeadbeef, built.localHeaderOffsets[1]! - 12);
    await rejectsWith(openBuffer(bytes), 'zip_invalid', /data descriptor/);
  });

  test('corrupt content: CRC mismatch, bad deflate, wrong declared size', async () => {
    const crcFlip = buildZip([{ name: 'a', data: 'hello', method: 0 }]);
    const flipped = Buffer.from(crcFlip.bytes);
    flipped.writeUInt8(flipped.readUInt8(crcFlip.dataOffsets[0]!) ^ 1, crcFlip.dataOffsets[0]!);
    await rejectsWith(readAll(await openBuffer(flipped)), 'zip_invalid', /CRC-32/);
    const junk = zipOf([{ name: 'a', data: 'hello', rawData: Buffer.from([0xff, 0xff, 0xff, 0xff]) }]);
    await rejectsWith(readAll(await openBuffer(junk)), 'zip_invalid', /deflate|inflates/);
    const shortDeflate = deflateRawSync(Buffer.from('hello world')).subarray(0, 4);
    await rejectsWith(readAll(await openBuffer(zipOf([{ name: 'a', data: 'hello world', rawData: shortDeflate }]))), 'zip_invalid');
    const centralUnderstates = zipOf([{ name: 'a', data: 'hello world', uncompressedSize: 5 }]);
    await rejectsWith(openBuffer(centralUnderstates), 'zip_invalid', /sizes/);
  });
  // Small entries inflate on the calling thread, larger ones (from 256 KiB) on libuv's pool, and
  // larger still stream: each way refuses the same bad content with the same error.
  for (const size of [10 * 1024, 600 * 1024, 2 * 1024 * 1024]) {
    test(`corrupt deflate and over-production, ${size / 1024} KiB entry`, async () => {
      const data = randomBytes(size);
      const built = buildZip([{ name: 'a', data }]);
      const damaged = Buffer.from(built.bytes);
      // A stored block's length field (LEN) no longer matches its complement (NLEN).
      damaged.writeUInt8(damaged.readUInt8(built.dataOffsets[0]! + 1) ^ 0xff, built.dataOffsets[0]! + 1);
      await rejectsWith(readAll(await openBuffer(damaged)), 'zip_invalid', /deflate/);
      const understated = Buffer.from(built.bytes);
      for (const at of [22, built.cdOffset + 24]) understated.writeUInt32LE(size - 1024, at);
      await rejectsWith(readAll(await openBuffer(understated)), 'zip_invalid', /more than its declared/);
    });
  }
});

describe('unsafe names (zip_unsafe_entry)', () => {
  for (const name of ['../evil', 'a/../../evil', '/etc/passwd', '\\windows', 'C:evil', 'a\\..\\b', 'nul\u0000byte', 'line\nfeed', '']) {
    test(JSON.stringify(name), async () => {
      await rejectsWith(openBuffer(zipOf([{ name }])), 'zip_unsafe_entry');
    });
  }
  test('a name containing ".." inside a segment is fine', async () => {
    const zip = await openBuffer(zipOf([{ name: 'a..b/c..' }]));
    assert.equal(zip.entries[0]!.name, 'a..b/c..');
  });
});

describe('symlinks pointing outside the archive (zip_unsafe_entry)', () => {
  const link = (name: string, target: string): BuildEntry => ({ name, data: target, method: 0, externalAttributes: (0o120777 << 16) >>> 0 });
  test('contained targets are returned', async () => {
    const zip = await openBuffer(zipOf([link('Payload/A.app/Current', 'Versions/A'), link('a/b/up', '../c'), link('x', './y')]));
    assert.deepEqual(await Promise.all(zip.entries.map((e) => zip.readSymlinkTarget(e))), ['Versions/A', '../c', './y']);
  });
  for (const [name, target] of [['a/escape', '../../etc/passwd'], ['abs', '/etc/passwd'], ['top', '..'], ['win', 'C:\\x'], ['empty', '']]) {
    test(`${name} -> ${JSON.stringify(target)}`, async () => {
      const zip = await openBuffer(zipOf([link(name!, target!)]));
      await rejectsWith(zip.readSymlinkTarget(zip.entries[0]!), 'zip_unsafe_entry', /points outside/);
    });
  }
});

describe('duplicates (zip_duplicate_entry)', () => {
  const pairs: [string, string][] = [['a', 'a'], ['a/./b', 'a/b'], ['a//b', 'a/b'], ['x', 'x/'], ['caf\u00e9', 'cafe\u0301']];
  for (const [first, second] of pairs) {
    test(`${JSON.stringify(first)} and ${JSON.stringify(second)}`, async () => {
      await rejectsWith(openBuffer(zipOf([{ name: first }, { name: second }])), 'zip_duplicate_entry');
    });
  }
  test('case differences are distinct entries', async () => {
    assert.equal((await openBuffer(zipOf([{ name: 'A' }, { name: 'a' }]))).entries.length, 2);
  });
  test('the duplicate key of every short name over "a", "b", ".", "/" and "é" is its normalised path', () => {
    // duplicateKey returns most names as they are (a fast path); this checks it against the rule.
    const rule = (name: string): string => name.normalize('NFC').split('/').filter((s) => s !== '' && s !== '.').join('/');
    const alphabet = ['a', 'b', '.', '/', '\u00e9', 'e\u0301'];
    const names = [''];
    for (let length = 1; length <= 5; length++) for (const name of names.filter((n) => [...n].length === length - 1)) for (const c of alphabet) names.push(name + c);
    for (const name of names) assert.equal(duplicateKey(name), rule(name), JSON.stringify(name));
  });
});

describe('overlaps (zip_overlapping_entries)', () => {
  test('two records sharing one local header', async () => {
    // Second central record with the same local header offset but a different name.
    await rejectsWith(openBuffer(zipOf([{ name: 'a', data: 'x'.repeat(100) }, { name: 'b', data: 'y', localHeaderOffset: 0 }])), 'zip_overlapping_entries');
  });
  test('an entry whose header sits inside another entry\'s data (overlap bomb)', async () => {
    // "outer" stores 200 bytes from offset 35; the record of "b" points at offset 40, inside them.
    const entries: BuildEntry[] = [{ name: 'outer', method: 0, data: Buffer.alloc(200) }, { name: 'b', data: 'y', localHeaderOffset: 40 }];
    await rejectsWith(openBuffer(zipOf(entries)), 'zip_overlapping_entries', /overlaps "outer"/);
  });
  test('entry data running into the central directory', async () => {
    await rejectsWith(openBuffer(zipOf([{ name: 'a', data: 'abc', method: 0, compressedSize: 500, uncompressedSize: 500, crc32: 0 }])), 'zip_invalid');
    const built = buildZip([{ name: 'a', data: 'abc', method: 0 }]);
    const bytes = Buffer.from(built.bytes);
    // Bump the central directory's compressed and uncompressed sizes (and the local header's).
    for (const at of [built.cdOffset + 20, built.cdOffset + 24, 18, 22]) bytes.writeUInt32LE(400, at);
    await rejectsWith(openBuffer(bytes), 'zip_overlapping_entries', /central directory/);
  });
});

describe('zip bombs (zip_bomb)', () => {
  const zeros = Buffer.alloc(4 * 1024 * 1024);
  test('declared ratio beyond the bound', async () => {
    await rejectsWith(openBuffer(zipOf([{ name: 'z', data: zeros }])), 'zip_bomb', /ratio/);
    const zip = await openBuffer(zipOf([{ name: 'z', data: zeros }]), { maxCompressionRatio: 2000 });
    assert.equal((await readAll(zip)).get('z')!.length, zeros.length);
  });
  test('an honest file whose first part compresses far better than the whole is not a bomb', async () => {
    const noise = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < noise.length; i++) noise.writeUInt8((Math.imul(i, 2654435761) >>> 13) & 0xff, i);
    const data = Buffer.concat([Buffer.alloc(8 * 1024 * 1024), noise]);
    const zip = await openBuffer(zipOf([{ name: 'sparse.img', data }]));
    assert.ok(zip.entries[0]!.compressedSize * 200 > data.length);
    assert.ok((await readAll(zip)).get('sparse.img')!.equals(data));
  });
  test('declared size beyond the absolute bound, and too many entries', async () => {
    await rejectsWith(openBuffer(zipOf([{ name: 'a', data: 'x'.repeat(2000) }]), { maxEntryUncompressedSize: 1000 }), 'zip_bomb');
    await rejectsWith(openBuffer(zipOf([{ name: 'a', data: 'x'.repeat(600) }, { name: 'b', data: 'x'.repeat(600) }]), { maxTotalUncompressedSize: 1000 }), 'zip_bomb');
    await rejectsWith(openBuffer(zipOf([{ name: 'a' }, { name: 'b' }]), { maxEntries: 1 }), 'zip_bomb', /entries/);
  });
  test('content that inflates past its declared size is stopped while streaming', async () => {
    // Data descriptor style: local header says nothing, central directory understates the size.
    const lie = zipOf([{ name: 'z', data: zeros, uncompressedSize: 1000, dataDescriptor: 'signed', flags: 0x08 }]);
    // The descriptor carries the true size, so the cross-check fails first: build without one.
    await rejectsWith(openBuffer(lie), 'zip_invalid', /data descriptor/);
    const built = buildZip([{ name: 'z', data: zeros }]);
    const bytes = Buffer.from(built.bytes);
    for (const at of [22, built.cdOffset + 24]) bytes.writeUInt32LE(1000, at);
    const zip = await openBuffer(bytes);
    await rejectsWith(readAll(zip), 'zip_invalid', /more than its declared/);
  });
  test('readEntry refuses entries above its maximum', async () => {
    const zip = await openBuffer(zipOf([{ name: 'a', data: 'x'.repeat(100) }]));
    await rejectsWith(zip.readEntry(zip.entries[0]!, 99), 'zip_bomb');
  });
});

describe('unsupported features (zip_unsupported)', () => {
  test('encryption, other methods, multi-disk', async () => {
    await rejectsWith(openBuffer(zipOf([{ name: 'a', flags: 0x0001 }])), 'zip_unsupported', /encrypted/);
    await rejectsWith(openBuffer(zipOf([{ name: 'a', method: 12, rawData: Buffer.from('bz') }])), 'zip_unsupported', /method 12/);
    await rejectsWith(openBuffer(buildZip([{ name: 'a' }], { eocd: { diskNumber: 1 } }).bytes), 'zip_unsupported', /multi-disk/);
  });
});
