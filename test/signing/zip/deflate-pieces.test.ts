// The pieced deflater: its pieces join into one deflate stream that inflates to the input, and
// the level it picks keeps the target ratio.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { deflatePieces, deflatePiecesOf, levelKeepingRatio, levelKeepingRatioOffThread, PIECE_SIZE } from '../../../src/signing/zip/deflate-pieces.ts';

async function* chunked(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

/** ~50 % compressible, like code: half of every KiB repeats an earlier stretch. */
function codeLike(size: number): Buffer {
  const data = randomBytes(size);
  for (let at = 1024; at + 1024 <= size; at += 1024) data.copy(data, at + 512, at - 1024, at - 512);
  return data;
}

describe('deflatePieces', () => {
  it('joins its pieces into one stream that inflates to the input, whatever the chunking', async () => {
    for (const size of [0, 1, 4095, 256 * 1024, 256 * 1024 + 1, 1300 * 1024 + 7]) {
      const data = codeLike(size);
      for (const chunk of [1000, 64 * 1024, 1 << 20]) {
        const out = await collect(deflatePieces(chunked(data, chunk), { level: 6 }));
        assert.ok(inflateRawSync(out).equals(data), `size ${size}, chunk ${chunk}`);
        // Streamed or in memory, the same bytes.
        const pieces = Array.from({ length: Math.max(1, Math.ceil(size / PIECE_SIZE)) }, (_, i) => data.subarray(i * PIECE_SIZE, (i + 1) * PIECE_SIZE));
        assert.ok((await deflatePiecesOf(pieces, { level: 6 })).equals(out), `size ${size}, chunk ${chunk}: in memory`);
      }
    }
  });

  it('writes a stored head ahead of the pieces, streamed or in memory alike', async () => {
    for (const size of [0, 100, 3000, 3001, 256 * 1024 + 3000, 700 * 1024]) {
      const data = codeLike(size);
      const head = Math.min(3000, size);
      for (const chunk of [1000, 64 * 1024]) {
        const out = await collect(deflatePieces(chunked(data, chunk), { level: 6, targetRatio: 0.5, storedHead: head }));
        assert.ok(inflateRawSync(out).equals(data), `size ${size}, chunk ${chunk}`);
        // The head's bytes lie as they are after the stored block's 5-byte header, in place.
        assert.ok(out.subarray(5, 5 + head).equals(data.subarray(0, head)), `size ${size}: stored head`);
        // After the head, the pieces keep their places: the first ends at PIECE_SIZE.
        const ends = [head, ...Array.from({ length: Math.ceil(size / PIECE_SIZE) }, (_, i) => Math.min(size, (i + 1) * PIECE_SIZE))].filter((end, i, all) => i === 0 || end > all[i - 1]!);
        const pieces = ends.map((end, i) => data.subarray(i === 0 ? 0 : ends[i - 1]!, end));
        assert.ok((await deflatePiecesOf(pieces, { level: 6, targetRatio: 0.5, storedHead: head })).equals(out), `size ${size}, chunk ${chunk}: in memory`);
      }
    }
    await assert.rejects(deflatePiecesOf([Buffer.alloc(10)], { level: 6, storedHead: 11 }), RangeError);
  });

  it('uses level 1 when it keeps the target ratio, the given level when it does not', async () => {
    // Text that level 9 compresses far better than level 1, the same all through.
    const data = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `line ${i % 97} of a text that level 9 compresses better ${(i * 7) % 13}\n`).join(''));
    const sample = data.subarray(0, PIECE_SIZE);
    const level1 = deflateRawSync(sample, { level: 1 }).length;
    const level9 = deflateRawSync(sample, { level: 9 }).length;
    assert.ok(level9 < level1 * 0.97, 'the sample must separate the levels');
    assert.equal(levelKeepingRatio(sample, { level: 9, targetRatio: level1 / sample.length }), 1);
    assert.equal(levelKeepingRatio(sample, { level: 9, targetRatio: level9 / sample.length }), 9);
    assert.equal(levelKeepingRatio(sample, { level: 9 }), 9);
    // Random data: level 1 is as good as any, whatever the target.
    assert.equal(levelKeepingRatio(randomBytes(PIECE_SIZE), { level: 6, targetRatio: 0.5 }), 1);
    // The off-thread form decides alike.
    for (const options of [{ level: 9, targetRatio: level1 / sample.length }, { level: 9, targetRatio: level9 / sample.length }, { level: 9 }]) {
      assert.equal(await levelKeepingRatioOffThread(sample, options), levelKeepingRatio(sample, options));
    }
    const loose = await collect(deflatePieces(chunked(data, 1 << 16), { level: 9, targetRatio: level1 / sample.length }));
    const tight = await collect(deflatePieces(chunked(data, 1 << 16), { level: 9, targetRatio: level9 / sample.length }));
    assert.ok(inflateRawSync(loose).equals(data) && inflateRawSync(tight).equals(data));
    assert.ok(loose.length > tight.length * 1.03, `${loose.length} vs ${tight.length}`);
  });

  it('passes on a failure of its input', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield randomBytes(1_000_000);
      throw new Error('read failed');
    }
    await assert.rejects(collect(deflatePieces(failing(), { level: 6 })), /read failed/);
  });
});
