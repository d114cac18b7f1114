// Truncations and byte flips of valid archives: the reader may accept or refuse them, but it must
// only ever throw SigningError, and finish quickly (test timeout), never crash or hang. Accepted
// archives must survive a raw copy by the writer and be accepted again.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { MemorySink } from '../../../src/signing/data-sink.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { ZipWriter } from '../../../src/signing/zip/index.ts';
import { sharedFixture, needsSharedFixtures } from '../../support/fixtures.ts';
import { buildZip } from '../../support/zip-builder.ts';
import { openBuffer, readAll } from './helpers.ts';

/** Deterministic xorshift32 so a failure can be reproduced from its case number. */
function random(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 0x100000000;
  };
}

async function survives(bytes: Buffer, label: string): Promise<void> {
  let zip;
  try {
    zip = await openBuffer(bytes);
    await readAll(zip);
  } catch (error) {
    assert.ok(error instanceof SigningError, `${label}: threw ${String(error)}`);
    return;
  }
  // Whatever the reader accepts, the writer must copy into an archive the reader accepts again.
  const sink = new MemorySink();
  const writer = new ZipWriter(sink);
  for (const entry of zip.entriesInFileOrder()) await writer.addRaw(entry, zip, { alignment: 'force' });
  await writer.finish({ comment: zip.geometry.comment });
  const copy = await openBuffer(sink.toBuffer());
  assert.equal(copy.entries.length, zip.entries.length, label);
  await readAll(copy);
}

async function mutate(original: Buffer, cases: number, seed: number, label: string): Promise<void> {
  const next = random(seed);
  for (let i = 0; i < cases; i++) {
    const bytes = Buffer.from(original);
    const kind = i % 3;
    if (kind === 0) {
      await survives(bytes.subarray(0, Math.floor(next() * bytes.length)), `${label} truncate #${i}`);
      continue;
    }
    // Flips cluster near the structures (end of file) half the time, where they matter most.
    const flips = 1 + Math.floor(next() * 4);
    for (let f = 0; f < flips; f++) {
      const at = kind === 1 ? Math.floor(next() * bytes.length) : bytes.length - 1 - Math.floor(next() * Math.min(bytes.length, 400));
      bytes.writeUInt8(Math.floor(next() * 256), at);
    }
    await survives(bytes, `${label} flip #${i}`);
  }
}

test('fuzzed built archive: only SigningError, never a hang', { timeout: 60_000 }, async () => {
  const built = buildZip([
    { name: 'dir/', method: 0 },
    { name: 'dir/a.txt', data: 'hello '.repeat(200) },
    { name: 'b.bin', data: Buffer.alloc(5000, 3), method: 0 },
    { name: 'c', data: 'descriptor'.repeat(50), dataDescriptor: 'signed' },
    { name: 'z64', data: 'zip64', zip64: true },
  ], { comment: 'fuzz' });
  await mutate(built.bytes, 300, 0x5eed, 'built');
});

test('fuzzed fixture APK: only SigningError, never a hang', { timeout: 60_000, ...needsSharedFixtures() }, async () => {
  const apk = readFileSync(sharedFixture('android/apksig/golden/golden-aligned-v1v2v3-out.apk')!);
  await mutate(apk, 300, 0xa9c, 'apk');
});
