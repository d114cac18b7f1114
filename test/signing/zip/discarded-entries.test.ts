// ZipOpenOptions.discarded: entries the caller drops unread (an APK re-sign's old JAR signature
// files) get only the checks needed to step over them - apksig LocalFileRecord.getRecord's - and
// a read of one that failed a content check still fails. Kept entries lose nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { MemorySink } from '../../../src/signing/data-sink.ts';
import { ZipReader, ZipWriter, type ZipOpenOptions } from '../../../src/signing/zip/index.ts';
import { buildZip, type BuildEntry } from '../../support/zip-builder.ts';
import { readAll, rejectsWith } from './helpers.ts';

const signatureFiles = (name: string): boolean => name.startsWith('META-INF/') || name.endsWith('/');
const open = (bytes: Buffer, options: ZipOpenOptions = { discarded: signatureFiles }): Promise<ZipReader> => ZipReader.open(new BufferSource(bytes), options);
const kept: BuildEntry = { name: 'classes.dex', data: 'dex\n035\0 some code', method: 8 };
const zipOf = (...entries: BuildEntry[]): Buffer => buildZip([...entries, kept]).bytes;

describe('discarded entries', () => {
  test('an unsupported compression method is tolerated until the entry is read', async () => {
    const bytes = zipOf({ name: 'META-INF/CERT.RSA', data: 'signature block', method: 21, rawData: Buffer.from('not deflate at all') });
    await rejectsWith(open(bytes, {}), 'zip_unsupported', /CERT\.RSA.*compression method 21/);
    const zip = await open(bytes);
    const entry = zip.getEntry('META-INF/CERT.RSA')!;
    assert.equal(entry.discarded, true);
    assert.equal(entry.method, 21);
    assert.deepEqual(entry.tolerated.map((e) => e.code), ['zip_unsupported']);
    assert.equal(entry.unreadable, entry.tolerated[0]);
    await rejectsWith(zip.readEntry(entry), 'zip_unsupported', /compression method 21/);
    await rejectsWith((async () => { for await (const _ of zip.contentChunks(entry)); })(), 'zip_unsupported');
    await rejectsWith((async () => { for await (const _ of zip.rawChunks(entry)); })(), 'zip_unsupported');
    // The kept entry is untouched by the leniency and reads as always.
    const dex = zip.getEntry('classes.dex')!;
    assert.equal(dex.discarded, false);
    assert.deepEqual(dex.tolerated, []);
    assert.equal((await zip.readEntry(dex)).toString(), 'dex\n035\0 some code');
  });

  test('a local header that disagrees about the method is read by the central directory', async () => {
    const bytes = zipOf({ name: 'META-INF/MANIFEST.MF', data: 'Manifest-Version: 1.0\r\n\r\n', method: 8, localMethod: 0 });
    await rejectsWith(open(bytes, {}), 'zip_invalid', /local header of "META-INF\/MANIFEST\.MF".*compression method 0, the central directory says 8/);
    const zip = await open(bytes);
    const entry = zip.getEntry('META-INF/MANIFEST.MF')!;
    assert.match(entry.tolerated[0]!.message, /compression method 0/);
    assert.equal(entry.unreadable, null);
    assert.equal((await zip.readEntry(entry)).toString(), 'Manifest-Version: 1.0\r\n\r\n');
  });

  test('encryption, unsafe names, declared sizes and descriptor contents are tolerated; copying refuses', async () => {
    const built = buildZip([
      { name: 'META-INF/CERT.DSA', data: 'x', flags: 0x0801 },
      { name: '../outside/', data: '', method: 0 },
      { name: 'META-INF/A\u0001.EC', data: 'y' },
      { name: 'META-INF/CERT.SF', data: 'Signature-Version: 1.0\r\n', dataDescriptor: 'signed' },
      { name: 'META-INF/BIG.RSA', data: 'z', uncompressedSize: 3 * 1024 * 1024 * 1024 },
      kept,
    ]);
    const bytes = Buffer.from(built.bytes);
    // The descriptor's CRC no longer matches; the local header holds the big declared size too.
    bytes.writeUInt32LE(0xdeadbeef, built.localHeaderOffsets[4]! - 12);
    bytes.writeUInt32LE(3 * 1024 * 1024 * 1024, built.localHeaderOffsets[4]! + 22);
    await rejectsWith(open(bytes, {}), 'zip_unsupported', /encrypted/);
    const zip = await open(bytes);
    const codes = Object.fromEntries(zip.entries.map((e) => [e.name, e.tolerated.map((t) => t.code)]));
    assert.deepEqual(codes, {
      'META-INF/CERT.DSA': ['zip_unsupported'],
      '../outside/': ['zip_unsafe_entry'],
      'META-INF/A\u0001.EC': ['zip_unsafe_entry'],
      'META-INF/CERT.SF': ['zip_invalid'],
      'META-INF/BIG.RSA': ['zip_bomb'],
      'classes.dex': [],
    });
    // apksig's rule for a descriptor it does not compare: 16 bytes when it starts with the signature.
    assert.equal(zip.getEntry('META-INF/CERT.SF')!.dataDescriptorSize, 16);
    assert.equal(zip.getEntry('META-INF/CERT.SF')!.unreadable, null);
    await rejectsWith(zip.readEntry(zip.getEntry('META-INF/BIG.RSA')!, 2 ** 40), 'zip_bomb');
    const writer = new ZipWriter(new MemorySink());
    await rejectsWith(writer.addRaw(zip.getEntry('../outside/')!, zip), 'zip_unsafe_entry');
    await writer.addRaw(zip.getEntry('classes.dex')!, zip);
  });

  test('a stored entry with two sizes spans its uncompressed size, as apksig reads it', async () => {
    const built = buildZip([{ name: 'META-INF/SIG-X', data: 'abcd', method: 0, rawData: Buffer.from('abcdefgh') }, kept]);
    await rejectsWith(open(built.bytes, {}), 'zip_invalid', /different compressed and uncompressed sizes/);
    const zip = await open(built.bytes);
    const entry = zip.getEntry('META-INF/SIG-X')!;
    assert.equal(entry.endOffset, entry.dataOffset + 4);
    assert.match(entry.unreadable!.message, /different compressed and uncompressed sizes/);
  });

  test('what apksig refuses for every entry stays refused', async () => {
    const damaged = buildZip([{ name: 'META-INF/CERT.RSA', data: 'block' }, kept]);
    const noSignature = Buffer.from(damaged.bytes);
    noSignature.writeUInt32LE(0, 0);
    await rejectsWith(open(noSignature), 'zip_invalid', /no signature/);
    await rejectsWith(open(zipOf({ name: 'META-INF/CERT.RSA', data: 'b', localName: 'META-INF/CERT.RSB' })), 'zip_invalid', /different entry/);
    await rejectsWith(open(zipOf({ name: 'META-INF/CERT.RSA', data: 'b', crc32: 7 })), 'zip_invalid', /CRC-32 or sizes/);
    await rejectsWith(open(zipOf({ name: 'META-INF/CERT.RSA', data: 'b' }, { name: 'META-INF/CERT.RSA', data: 'b' })), 'zip_duplicate_entry');
    // Data that runs into the central directory, and a local header that does.
    const last = buildZip([kept, { name: 'META-INF/CERT.RSA', data: 'block', method: 0 }]);
    const pastEnd = Buffer.from(last.bytes);
    const cdRecord = last.cdOffset + 46 + 'classes.dex'.length;
    for (const [offset, field] of [[last.localHeaderOffsets[1]!, 18], [last.localHeaderOffsets[1]!, 22], [cdRecord, 20], [cdRecord, 24]] as const) pastEnd.writeUInt32LE(500, offset + field);
    await rejectsWith(open(pastEnd), 'zip_overlapping_entries', /runs into the central directory/);
    const truncated = Buffer.from(last.bytes);
    truncated.writeUInt32LE(last.cdOffset - 10, cdRecord + 42);
    await rejectsWith(open(truncated), 'zip_overlapping_entries');
  });

  test('a name clash matters only between kept entries', async () => {
    // A discarded directory "lib/" and a kept file "lib" are one path to an extractor only.
    const zip = await open(zipOf({ name: 'lib/', data: '', method: 0 }, { name: 'lib', data: 'file' }));
    assert.deepEqual(zip.getEntry('lib/')!.tolerated.map((e) => e.code), ['zip_duplicate_entry']);
    assert.deepEqual(zip.getEntry('lib')!.tolerated, []);
    await rejectsWith(open(zipOf({ name: 'lib/', data: '', method: 0 }, { name: 'lib', data: 'file' }), {}), 'zip_duplicate_entry');
    // Two kept spellings of one path behind a discarded one are still refused.
    await rejectsWith(open(zipOf({ name: 'x/', data: '', method: 0 }, { name: 'x', data: '1' }, { name: './x', data: '2' })), 'zip_duplicate_entry', /"x" and "\.\/x"/);
  });

  test('discarded entries do not count towards the archive total, kept ones do', async () => {
    const bytes = zipOf({ name: 'META-INF/CERT.RSA', data: Buffer.alloc(5000, 1) });
    const limits = { maxTotalUncompressedSize: 4000 };
    await rejectsWith(open(bytes, { limits }), 'zip_bomb', /expands to more than 4000/);
    const zip = await open(bytes, { limits, discarded: signatureFiles });
    assert.equal((await readAll(zip)).get('classes.dex')!.toString(), 'dex\n035\0 some code');
  });
});
