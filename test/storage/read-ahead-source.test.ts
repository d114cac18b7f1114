// ReadAheadSource: the right bytes from any range, one request per miss, read-ahead only for
// sequential reads, shared requests for concurrent reads of a block, failures not cached.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ReadAheadSource, type RangeFetch } from '../../src/storage/read-ahead-source.ts';

const KiB = 1024;
const data = Buffer.alloc(3 * 1024 * KiB + 5);
for (let i = 0; i < data.length; i += 1) data[i] = (i * 7 + (i >>> 11)) & 0xff;

function counting(fail = 0): { fetch: RangeFetch; calls: Array<[number, number]> } {
  const calls: Array<[number, number]> = [];
  let failures = fail;
  return {
    calls,
    fetch: async (start, end) => {
      calls.push([start, end]);
      await new Promise((resolve) => setImmediate(resolve));
      if (failures-- > 0) throw new Error('connection reset');
      return Buffer.from(data.subarray(start, end));
    },
  };
}

it('serves any range, across blocks and at the ends, with one request per miss', async () => {
  const { fetch, calls } = counting();
  const source = new ReadAheadSource(data.length, fetch, { blockSize: 64 * KiB, maxReadAhead: 256 * KiB });
  assert.deepEqual(await source.read(data.length - 22, 22), data.subarray(data.length - 22));
  assert.deepEqual(calls, [[Math.floor((data.length - 22) / (64 * KiB)) * 64 * KiB, data.length]], 'the last block only');
  assert.deepEqual(await source.read(data.length - 10, 10), data.subarray(data.length - 10));
  assert.equal(calls.length, 1, 'a cached block costs no request');
  assert.deepEqual(await source.read(100 * KiB, 300 * KiB), data.subarray(100 * KiB, 400 * KiB));
  assert.deepEqual(calls[1], [64 * KiB, 448 * KiB], 'the blocks the read spans, in one request, no read-ahead for a jump');
  assert.deepEqual(await source.read(0, 0), Buffer.alloc(0));
  await assert.rejects(source.read(data.length - 1, 2), RangeError);
});

it('reads ahead, doubling, while reads are sequential', async () => {
  const { fetch, calls } = counting();
  const source = new ReadAheadSource(data.length, fetch, { blockSize: 16 * KiB, maxReadAhead: 512 * KiB, cacheBlocks: 256 });
  let offset = 0;
  const chunk = 8 * KiB;
  while (offset + chunk <= 2 * 1024 * KiB) {
    assert.deepEqual(await source.read(offset, chunk), data.subarray(offset, offset + chunk));
    offset += chunk;
  }
  // 256 sequential reads of 8 KiB: without read-ahead that is 128 block requests.
  assert.ok(calls.length <= 10, `${calls.length} requests for 2 MiB read sequentially`);
  const sizes = calls.map(([start, end]) => end - start);
  assert.ok(sizes.at(-1)! >= 256 * KiB, `the read-ahead grew: ${sizes.join(', ')}`);
});

it('shares one request between concurrent reads of a block and does not cache a failure', async () => {
  const { fetch, calls } = counting(1);
  const source = new ReadAheadSource(data.length, fetch, { blockSize: 64 * KiB });
  const reads = [source.read(10, 5), source.read(20, 5), source.read(30, 5)];
  for (const read of reads) await assert.rejects(read, /connection reset/);
  assert.equal(calls.length, 1, 'one request for the three reads');
  assert.deepEqual(await source.read(10, 5), data.subarray(10, 15), 'the next read asks again');
  assert.equal(calls.length, 2);
});

it('evicts least recently used blocks beyond its cache', async () => {
  const { fetch, calls } = counting();
  const source = new ReadAheadSource(data.length, fetch, { blockSize: 64 * KiB, cacheBlocks: 2 });
  await source.read(0, 1);
  await source.read(200 * KiB, 1);
  await source.read(400 * KiB, 1);
  await source.read(0, 1);
  assert.equal(calls.length, 4, 'block 0 was evicted and fetched again');
  await source.read(400 * KiB, 1);
  assert.equal(calls.length, 4, 'block 6 is still cached');
});
