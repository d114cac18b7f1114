// The re-signer's background hashing: records for every entry, and waiters that fail, not hang,
// when the scan stops early (a corrupt entry, an abort) before reaching their folder.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { startScan, type FileRecord } from '../../../../src/signing/ios/resign/scan.ts';
import { ZipReader, ZipWriter } from '../../../../src/signing/zip/index.ts';

const NAMES = ['A.app/a/1', 'A.app/b/1', 'A.app/b/2', 'A.app/c/1', 'A.app/c/2'];

async function zip(): Promise<ZipReader> {
  const sink = new MemorySink();
  const writer = new ZipWriter(sink);
  for (const name of NAMES) await writer.addEntry(name, Buffer.from(`content of ${name}`), { method: 'deflate' });
  await writer.finish();
  return ZipReader.open(new BufferSource(sink.toBuffer()));
}

describe('background scan', () => {
  it('hashes every entry (SHA-1 and SHA-256) and settles folder by folder', async () => {
    const reader = await zip();
    const records = new Map<string, FileRecord>();
    const scan = startScan(reader, NAMES.map((n) => reader.getEntry(n)!), records);
    await scan.settledUnder('A.app/c/');
    await scan.done;
    for (const name of NAMES) {
      const bytes = Buffer.from(`content of ${name}`);
      assert.deepEqual(records.get(name), { kind: 'file', sha1: createHash('sha1').update(bytes).digest(), sha256: createHash('sha256').update(bytes).digest() });
    }
  });

  it('fails the waiters of entries no lane will reach once aborted', { timeout: 10_000 }, async () => {
    const reader = await zip();
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    const scan = startScan(reader, NAMES.map((n) => reader.getEntry(n)!), new Map(), controller.signal);
    // The two lanes each fail one entry of a/ and b/ and stop; c/ is never reached.
    await assert.rejects(scan.settledUnder('A.app/c/'), /stopped/);
    await assert.rejects(scan.done, /stopped/);
  });
});
