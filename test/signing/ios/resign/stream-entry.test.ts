// A zip entry as streaming-signer input: ranges and the sequential pass give the entry's bytes,
// stored or deflated over several 1 MiB steps, and damage is a zip error, not a crash or hang.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { entryStreamInput } from '../../../../src/signing/ios/resign/stream-entry.ts';
import { ZipReader, ZipWriter } from '../../../../src/signing/zip/index.ts';

// 3.5 MiB, half random (so deflate cannot swallow it), half compressible.
const content = Buffer.concat([randomBytes(1_800_000), Buffer.from('load commands, code, linkedit '.repeat(60_000))]);

async function archive(): Promise<Buffer> {
  const sink = new MemorySink();
  const writer = new ZipWriter(sink);
  await writer.addEntry('stored', content, { method: 'stored' });
  await writer.addEntry('deflated', content, { method: 'deflate', level: 6 });
  await writer.finish();
  return sink.toBuffer();
}

async function drain(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

const isZipError = (error: unknown): boolean => error instanceof SigningError && error.code === 'zip_invalid';

describe('zip entries as streaming input', () => {
  it('reads ranges and streams the whole content, stored and deflated', async () => {
    const zip = await ZipReader.open(new BufferSource(await archive()));
    for (const name of ['stored', 'deflated']) {
      const input = entryStreamInput(zip, zip.getEntry(name)!);
      assert.equal(input.size, content.length);
      assert.ok((await input.read(0, 32)).equals(content.subarray(0, 32)), name);
      const tail = content.length - 70_000;
      assert.ok((await input.read(tail, 70_000)).equals(content.subarray(tail)), name);
      assert.ok((await drain(input.chunks())).equals(content), name);
      await assert.rejects(input.read(content.length - 10, 11), RangeError);
    }
  });

  it('reports corrupt deflate data and a wrong CRC-32 as zip_invalid', async () => {
    const bytes = await archive();
    const entry = (await ZipReader.open(new BufferSource(bytes))).getEntry('deflated')!;
    // Damage inside the compressed (Huffman-coded) half: the inflater fails there. (The range read
    // runs through it; a range read does not check the CRC, which the full pass does.)
    const corrupt = Buffer.from(bytes);
    const end = entry.dataOffset + entry.compressedSize;
    corrupt.fill(0xff, end - 3000, end - 2000);
    const damaged = await ZipReader.open(new BufferSource(corrupt));
    await assert.rejects(drain(entryStreamInput(damaged, damaged.getEntry('deflated')!).chunks()), isZipError);
    await assert.rejects(entryStreamInput(damaged, damaged.getEntry('deflated')!).read(content.length - 100, 100), isZipError);

    const zip = await ZipReader.open(new BufferSource(bytes));
    const wrongCrc = { ...zip.getEntry('deflated')!, crc32: (entry.crc32 ^ 1) >>> 0 };
    await assert.rejects(drain(entryStreamInput(zip, wrongCrc).chunks()), isZipError);
  });

  it('stops cleanly when the consumer stops early', async () => {
    const zip = await ZipReader.open(new BufferSource(await archive()));
    const input = entryStreamInput(zip, zip.getEntry('deflated')!);
    for await (const chunk of input.chunks()) {
      assert.ok(chunk.length > 0);
      break;
    }
    // The range read stops inflating once it has its bytes; a second pass starts afresh.
    assert.ok((await input.read(100, 10)).equals(content.subarray(100, 110)));
    assert.ok((await drain(input.chunks())).equals(content));
  });
});
