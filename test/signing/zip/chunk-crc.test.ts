// Chunks whose CRC-32 the reader has taken are passed through by the writer without a second pass.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { MemorySink } from '../../../src/signing/data-sink.ts';
import { crc32Noted, knownChunkCrc } from '../../../src/signing/zip/chunk-crc.ts';
import { ZipWriter } from '../../../src/signing/zip/index.ts';
import { openBuffer } from './helpers.ts';

describe('chunk CRC-32s taken by the reader', () => {
  it('extends a running CRC-32 and remembers large chunks only, by identity', () => {
    const chunks = [randomBytes(300_000), randomBytes(1000), randomBytes(1 << 20)];
    let running = 0;
    for (const chunk of chunks) running = crc32Noted(chunk, running);
    assert.equal(running, crc32(Buffer.concat(chunks)));
    assert.equal(knownChunkCrc(chunks[0]!), crc32(chunks[0]!));
    assert.equal(knownChunkCrc(chunks[1]!), undefined, 'a small chunk is not remembered');
    assert.equal(knownChunkCrc(chunks[2]!.subarray(0)), undefined, 'a view is another chunk');
  });

  it('the writer combines remembered CRC-32s into the entry header, after a provisional head too', async () => {
    const head = Buffer.from('HEAD'.repeat(1024));
    const body = [randomBytes(512 * 1024), randomBytes(700_000), randomBytes(3000)];
    for (const chunk of body) crc32Noted(chunk, 0);
    const sink = new MemorySink();
    const writer = new ZipWriter(sink);
    async function* data(first: Buffer): AsyncGenerator<Buffer> {
      yield first;
      yield* body;
    }
    await writer.addEntry('plain.bin', data(head), { method: 'stored' });
    const final = Buffer.from('DONE'.repeat(1024));
    await writer.addEntry('patched.bin', data(Buffer.alloc(head.length)), { method: 'stored', provisionalHead: { length: head.length, final: () => final } });
    await writer.finish();
    const zip = await openBuffer(sink.toBuffer());
    assert.equal(zip.getEntry('plain.bin')!.crc32, crc32(Buffer.concat([head, ...body])));
    assert.equal(zip.getEntry('patched.bin')!.crc32, crc32(Buffer.concat([final, ...body])));
  });
});
