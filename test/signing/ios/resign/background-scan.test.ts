// The re-signer's background hashing, in-process (scan.ts startScan) and on a thread of its own
// (scan-thread.ts): the same contract for both. Records for every entry (symlinks yield their
// target), waiters that fail, not hang, when the scan stops early (a corrupt entry, an abort)
// before reaching their folder, and the failure's own error code.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource, FileSource, SIGNING_READS, type DataSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { startScanThread } from '../../../../src/signing/ios/resign/scan-thread.ts';
import { startScan, type BackgroundScan, type FileRecord } from '../../../../src/signing/ios/resign/scan.ts';
import { ZipReader, ZipWriter, type ZipEntry } from '../../../../src/signing/zip/index.ts';
import { testOutputDir } from '../../../support/fixtures.ts';

const NAMES = ['A.app/a/1', 'A.app/b/1', 'A.app/b/2', 'A.app/c/1', 'A.app/c/2'];
const LINK = 'A.app/b/link';

async function archive(corrupt?: string): Promise<Buffer> {
  const sink = new MemorySink();
  const writer = new ZipWriter(sink);
  for (const name of NAMES) await writer.addEntry(name, Buffer.from(`content of ${name}`.repeat(50)), { method: 'deflate' });
  await writer.addEntry(LINK, Buffer.from('1'), { method: 'stored', unixMode: 0o120777 });
  await writer.finish();
  const bytes = sink.toBuffer();
  if (corrupt !== undefined) {
    // A byte of the entry's deflate data flipped: its CRC-32 (or the deflate stream) fails.
    const entry = writer.entries.find((e) => e.name === corrupt)!;
    bytes[entry.dataOffset + 2]! ^= 0x55;
  }
  return bytes;
}

interface Variant {
  name: string;
  open(bytes: Buffer): Promise<DataSource>;
  start(zip: ZipReader, source: DataSource, entries: ZipEntry[], records: Map<string, FileRecord>, signal?: AbortSignal): BackgroundScan;
}

const dir = testOutputDir('background-scan');
let files = 0;
const opened: DataSource[] = [];
const variants: Variant[] = [
  { name: 'in-process', open: async (bytes) => new BufferSource(bytes), start: (zip, _source, entries, records, signal) => startScan(zip, entries, records, signal) },
  {
    name: 'on a thread',
    open: async (bytes) => {
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `scan-${process.pid}-${files++}.zip`);
      writeFileSync(file, bytes);
      const source = await FileSource.open(file, SIGNING_READS);
      opened.push(source);
      return source;
    },
    start: (zip, source, entries, records, signal) => startScanThread((source as FileSource).path, zip, entries, records, signal),
  },
];
after(async () => {
  for (const source of opened) await source.close();
});

for (const variant of variants) {
  describe(`background scan ${variant.name}`, () => {
    const begin = async (bytes: Buffer, signal?: AbortSignal): Promise<{ scan: BackgroundScan; records: Map<string, FileRecord> }> => {
      const source = await variant.open(bytes);
      const reader = await ZipReader.open(source);
      const records = new Map<string, FileRecord>();
      return { scan: variant.start(reader, source, [...NAMES, LINK].map((n) => reader.getEntry(n)!), records, signal), records };
    };

    it('hashes every entry (SHA-1 and SHA-256), reads symlinks, and settles folder by folder', async () => {
      const { scan, records } = await begin(await archive());
      await scan.settledUnder('A.app/b/');
      for (const name of ['A.app/a/1', 'A.app/b/1', 'A.app/b/2']) assert.ok(records.has(name), name);
      await scan.done;
      for (const name of NAMES) {
        const bytes = Buffer.from(`content of ${name}`.repeat(50));
        assert.deepEqual(records.get(name), { kind: 'file', sha1: createHash('sha1').update(bytes).digest(), sha256: createHash('sha256').update(bytes).digest() });
      }
      assert.deepEqual(records.get(LINK), { kind: 'symlink', target: '1' });
    });

    it('fails with the corrupt entry\'s own error, and so do the waiters it leaves behind', { timeout: 20_000 }, async () => {
      const { scan } = await begin(await archive('A.app/b/2'));
      await scan.settledUnder('A.app/a/');
      for (const pending of [scan.settledUnder('A.app/c/'), scan.done]) {
        await assert.rejects(pending, (error: unknown) => error instanceof SigningError && error.code === 'zip_invalid' && error.message.includes('A.app/b/2'));
      }
    });

    it('fails the waiters of entries it will not reach once aborted', { timeout: 20_000 }, async () => {
      const controller = new AbortController();
      controller.abort(new Error('stopped'));
      const { scan } = await begin(await archive(), controller.signal);
      await assert.rejects(scan.settledUnder('A.app/c/'), /stopped/);
      await assert.rejects(scan.done, /stopped/);
    });

    it('stops when aborted halfway', { timeout: 20_000 }, async () => {
      const controller = new AbortController();
      const { scan } = await begin(await archive(), controller.signal);
      // Aborted as soon as a/ is hashed, before the scan can be seen to be done.
      await scan.settledUnder('A.app/a/').then(() => controller.abort(new Error('stopped')));
      // Whatever was hashed meanwhile, the scan as a whole fails with the abort.
      await assert.rejects(scan.done, /stopped/);
    });
  });
}
