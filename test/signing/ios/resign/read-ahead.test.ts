// The re-signer's ReadAheadSource: the parent's bytes for any range, in both modes; in `reuse`
// mode refills go into one buffer (fewer reads than ranges, one allocation) and a parent without
// readInto falls back to a window per refill.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { BufferSource, FileSource, type DataSource } from '../../../../src/signing/data-source.ts';
import { ReadAheadSource } from '../../../../src/signing/ios/resign/read-ahead.ts';
import { testOutputDir } from '../../../support/fixtures.ts';

const data = Buffer.alloc(300_007);
for (let i = 0; i < data.length; i += 1) data[i] = (i * 7 + (i >>> 11)) & 0xff;
// Ranges in order with gaps, one of exactly the window size, one larger, the last byte.
const RANGES: Array<[number, number]> = [[0, 10], [10, 5000], [9000, 65536], [80_000, 100], [80_100, 70_000], [200_000, 65536], [290_000, 10_007], [300_006, 1]];

/** Counts the parent's reads (both kinds), keeping or hiding readInto. */
function counted(parent: DataSource, withReadInto: boolean): { source: DataSource; reads: () => number; intoBuffers: Set<ArrayBufferLike> } {
  let reads = 0;
  const intoBuffers = new Set<ArrayBufferLike>();
  const source: DataSource = {
    size: parent.size,
    read: (offset, length) => { reads += 1; return parent.read(offset, length); },
    close: () => parent.close(),
    ...(withReadInto ? { readInto: (offset: number, target: Buffer) => { reads += 1; intoBuffers.add(target.buffer); return parent.readInto!(offset, target); } } : {}),
  };
  return { source, reads: () => reads, intoBuffers };
}

for (const reuse of [false, true]) {
  it(`serves the parent's bytes for every range (reuse: ${reuse})`, async () => {
    const dir = testOutputDir('read-ahead');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'data.bin');
    writeFileSync(file, data);
    const parent = await FileSource.open(file);
    try {
      const { source, reads, intoBuffers } = counted(parent, true);
      const ahead = new ReadAheadSource(source, 65536, { reuse });
      for (const [offset, length] of RANGES) assert.ok((await ahead.read(offset, length)).equals(data.subarray(offset, offset + length)), `${offset}+${length}`);
      assert.ok(reads() < RANGES.length, 'small ranges come from one window');
      // In reuse mode every refill lands in one buffer; otherwise none go through readInto.
      assert.equal(intoBuffers.size, reuse ? 1 : 0);
      await assert.rejects(ahead.read(300_000, 100), RangeError);
    } finally {
      await parent.close();
    }
  });
}

it('falls back to a window per refill when the parent has no readInto', async () => {
  const { source } = counted(new BufferSource(data), false);
  const ahead = new ReadAheadSource(source, 65536, { reuse: true });
  const first = await ahead.read(0, 10);
  for (const [offset, length] of RANGES) assert.ok((await ahead.read(offset, length)).equals(data.subarray(offset, offset + length)));
  assert.ok(first.equals(data.subarray(0, 10)), 'without reuse, a view handed out stays valid');
});
