// Offsets and sizes past 4 GiB without 4 GiB of disk or memory: a sparse in-memory sink keeps
// only the non-zero writes, and a source over it serves zeros everywhere else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DataSink } from '../../../src/signing/data-sink.ts';
import type { DataSource } from '../../../src/signing/data-source.ts';
import { ZipReader, ZipWriter } from '../../../src/signing/zip/index.ts';

const ZEROS = Buffer.alloc(4 * 1024 * 1024);
const GiB = 1024 * 1024 * 1024;

/** Records writes by position; writes of the shared ZEROS buffer are only counted. */
class SparseSink implements DataSink {
  readonly records: { at: number; data: Buffer }[] = [];
  position = 0;

  async write(data: Buffer): Promise<void> {
    if (data.buffer !== ZEROS.buffer) this.records.push({ at: this.position, data: Buffer.from(data) });
    this.position += data.length;
  }

  async writeAt(offset: number, data: Buffer): Promise<void> {
    for (const record of this.records) {
      const start = Math.max(offset, record.at);
      const end = Math.min(offset + data.length, record.at + record.data.length);
      if (start < end) data.copy(record.data, start - record.at, start - offset, end - offset);
    }
  }

  async close(): Promise<void> {}

  source(): DataSource {
    const { records, position: size } = this;
    return {
      size,
      async read(offset: number, length: number): Promise<Buffer> {
        if (offset < 0 || offset + length > size) throw new RangeError('outside');
        const overlaps = records.some((r) => r.at < offset + length && offset < r.at + r.data.length);
        // Untouched ranges come back as the shared zero buffer, which a SparseSink does not store.
        if (!overlaps && length <= ZEROS.length) return ZEROS.subarray(0, length);
        const out = Buffer.alloc(length);
        for (const record of records) {
          const start = Math.max(offset, record.at);
          const end = Math.min(offset + length, record.at + record.data.length);
          if (start < end) record.data.copy(out, start - offset, start - record.at, end - record.at);
        }
        return out;
      },
      async close(): Promise<void> {},
    };
  }
}

async function* zeros(total: number): AsyncGenerator<Buffer> {
  for (let done = 0; done < total; done += ZEROS.length) yield ZEROS.subarray(0, Math.min(ZEROS.length, total - done));
}

test('entries beyond 4 GiB: Zip64 offsets, a 4.1 GiB stored entry, and a raw copy of both', { timeout: 120_000 }, async () => {
  const sink = new SparseSink();
  const w = new ZipWriter(sink);
  await w.addEntry('first.txt', Buffer.from('before the huge entry'));
  const hugeSize = 4 * GiB + 100;
  await w.addEntry('huge.bin', zeros(hugeSize), { method: 'stored', size: hugeSize });
  const late = await w.addEntry('late.txt', Buffer.from('after 4 GiB'));
  assert.ok(late.localHeaderOffset > 4 * GiB);
  const result = await w.finish();
  assert.ok(result.centralDirectoryOffset > 4 * GiB);

  const zip = await ZipReader.open(sink.source());
  assert.notEqual(zip.geometry.zip64EocdOffset, null);
  const huge = zip.getEntry('huge.bin')!;
  assert.equal(huge.uncompressedSize, hugeSize);
  assert.ok(huge.zip64);
  assert.equal(zip.getEntry('late.txt')!.localHeaderOffset, late.localHeaderOffset);
  assert.equal((await zip.readEntry(zip.getEntry('late.txt')!, 100)).toString(), 'after 4 GiB');
  // CRC-32 of 4 GiB of zeros, checked while streaming.
  let seen = 0;
  for await (const chunk of zip.contentChunks(huge)) seen += chunk.length;
  assert.equal(seen, hugeSize);

  // Raw copy behind a 1-byte shift: every record is rebuilt with Zip64 offsets.
  const copySink = new SparseSink();
  const copy = new ZipWriter(copySink);
  await copy.writeBytes(Buffer.from([0x7a]));
  const copied = [];
  for (const entry of zip.entries) copied.push(await copy.addRaw(entry, zip));
  await copy.finish();
  const reread = await ZipReader.open(copySink.source());
  const lateCopy = copied.find((e) => e.name === 'late.txt')!;
  assert.equal(reread.getEntry('late.txt')!.localHeaderOffset, lateCopy.localHeaderOffset);
  assert.ok(reread.getEntry('late.txt')!.zip64 && lateCopy.localHeaderOffset > 4 * GiB);
  // huge.bin was 4-aligned and moved by 1 byte, so 'preserve' realigned it with a 0xD935 field.
  assert.equal(reread.getEntry('huge.bin')!.dataOffset % 4, 0);
  assert.equal(reread.getEntry('huge.bin')!.uncompressedSize, hugeSize);
  assert.equal((await reread.readEntry(reread.getEntry('late.txt')!, 100)).toString(), 'after 4 GiB');

  // APKs may not use Zip64: the same copy is refused before anything is written.
  const apk = new ZipWriter(new SparseSink(), { allowZip64: false });
  await assert.rejects(apk.addRaw(huge, zip), (error: Error & { code?: string }) => error.code === 'zip_unsupported');
});
