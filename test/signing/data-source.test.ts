// FileSource's reads: by default every read goes through libuv's thread pool; with a
// syncReadLimit, reads up to it are made on the calling thread (SIGNING_READS), and the bytes,
// the range checks and the errors are the same either way.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FileSource, SIGNING_READS } from '../../src/signing/data-source.ts';

const LIMIT = SIGNING_READS.syncReadLimit!;

describe('FileSource reads', () => {
  let dir = '';
  let file = '';
  const data = randomBytes(3 * LIMIT + 123);

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'signet-file-source-'));
    file = path.join(dir, 'data.bin');
    await writeFile(file, data);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  // A read in flight on the thread pool is listed as an active FSReqPromise until this thread
  // takes its result, which cannot happen before the synchronous part of readInto returns.
  const poolReads = (): number => process.getActiveResourcesInfo().filter((name) => name === 'FSReqPromise').length;

  it('reads up to the limit on the calling thread, and only when asked to', async () => {
    const inline = await FileSource.open(file, SIGNING_READS);
    const pooled = await FileSource.open(file);
    try {
      const cases: [FileSource, number, boolean][] = [[inline, LIMIT, false], [inline, 1, false], [inline, LIMIT + 1, true], [pooled, 16, true], [pooled, LIMIT + 1, true]];
      for (const [source, length, viaPool] of cases) {
        const target = Buffer.alloc(length);
        const before = poolReads();
        const reading = source.readInto(5, target);
        assert.equal(poolReads() - before, viaPool ? 1 : 0, `${length} bytes ${viaPool ? 'through the thread pool' : 'on the calling thread'}`);
        if (!viaPool) assert.ok(target.equals(data.subarray(5, 5 + length)), 'filled before readInto returned');
        await reading;
        assert.ok(target.equals(data.subarray(5, 5 + length)));
      }
    } finally {
      await inline.close();
      await pooled.close();
    }
  });

  it('returns the same bytes either way, for reads on both sides of the limit and at the ends', async () => {
    for (const options of [{}, SIGNING_READS]) {
      const source = await FileSource.open(file, options);
      try {
        assert.equal(source.size, data.length);
        const ranges: [number, number][] = [[0, 0], [0, 1], [1, 100], [LIMIT - 7, LIMIT], [LIMIT, LIMIT + 1], [0, data.length], [data.length - 30, 30], [data.length, 0]];
        const together = await Promise.all(ranges.map(([offset, length]) => source.read(offset, length)));
        ranges.forEach(([offset, length], i) => assert.ok(together[i]!.equals(data.subarray(offset, offset + length)), `${length} bytes at ${offset}`));
        await assert.rejects(source.read(data.length - 10, 11), RangeError);
        await assert.rejects(source.read(-1, 1), RangeError);
      } finally {
        await source.close();
      }
    }
  });

  it('reports a file that shrank after it was opened, both ways', async () => {
    const shrinking = path.join(dir, 'shrinking.bin');
    await writeFile(shrinking, data);
    const sources = [await FileSource.open(shrinking), await FileSource.open(shrinking, SIGNING_READS)];
    await truncate(shrinking, 100);
    try {
      for (const source of sources) await assert.rejects(source.read(50, 200), /file shrank while reading at 100/);
    } finally {
      for (const source of sources) await source.close();
    }
  });
});
