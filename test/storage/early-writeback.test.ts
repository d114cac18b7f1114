// earlyWriteback is a pure pass-through: the file gets exactly the bytes, in order, whether the
// periodic syncs are still running when the file closes or not.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { it } from 'node:test';
import { earlyWriteback } from '../../src/storage/early-writeback.ts';
import { testOutputDir } from '../support/fixtures.ts';

it('passes every byte through unchanged while syncing along the way', async () => {
  const dir = testOutputDir('early-writeback');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'out.bin');
  const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(64 * 1024, i));
  const sink = createWriteStream(file, { flush: true });
  await pipeline(Readable.from(chunks), earlyWriteback(sink, 256 * 1024), sink);
  const expected = createHash('sha256').update(Buffer.concat(chunks)).digest('hex');
  assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), expected);
  rmSync(dir, { recursive: true, force: true });
});
