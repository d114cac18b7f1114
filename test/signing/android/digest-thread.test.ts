// The v1 digests on a thread of their own (sign/digest-thread.ts) against the in-process path:
// the same bytes out, the same digests, the same errors for damaged entries, and the reader's
// shared blocks refilled only once the thread has given them back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { crc32, deflateRawSync } from 'node:zlib';
import { signApk, verifyApk, type SignApkOptions, type SignApkResult } from '../../../src/signing/android/index.ts';
import { SequentialReader, type BlockLease } from '../../../src/signing/android/sign/sequential-reader.ts';
import { FileSink, MemorySink } from '../../../src/signing/data-sink.ts';
import { BufferSource, FileSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { ZipReader, ZipWriter } from '../../../src/signing/zip/index.ts';
import { apksigFixture, testIdentity } from '../../support/android-signing.ts';
import { needsSharedFixtures, testOutputDir } from '../../support/fixtures.ts';

const MiB = 1024 * 1024;

/**
 * golden-aligned-in.apk plus entries that go to the thread (16 KiB and more) between small ones
 * that stay on the main thread: deflated random bytes over several read blocks, a compressible
 * deflated file, stored data, and an empty entry; and a second large deflated entry, which the
 * main thread inflates beside the thread (large deflated entries alternate between them).
 */
async function mixedApk(): Promise<{ bytes: Buffer; offsets: Map<string, number> }> {
  const input = new BufferSource(readFileSync(apksigFixture('golden/golden-aligned-in.apk')));
  const zip = await ZipReader.open(input);
  const sink = new MemorySink();
  const writer = new ZipWriter(sink, { allowZip64: false });
  for (const entry of zip.entriesInFileOrder()) await writer.addRaw(entry, zip);
  const deflated = async (name: string, data: Buffer): Promise<void> => {
    await writer.addEntry(name, deflateRawSync(data), { method: 'deflate', precompressed: { crc32: crc32(data) >>> 0, uncompressedSize: data.length } });
  };
  await deflated('assets/random.bin', randomBytes(3 * MiB + 12345));
  await writer.addEntry('res/raw/small.txt', Buffer.from('small enough to stay on the main thread\n'.repeat(20)), { method: 'stored' });
  // Text that deflates about 2:1 (random hex digits), 1.5 MiB of it.
  await deflated('assets/text.txt', Buffer.from(randomBytes(768 * 1024).toString('hex')));
  await writer.addEntry('assets/stored.bin', randomBytes(2 * MiB + 7), { method: 'stored' });
  await writer.addEntry('assets/empty.bin', Buffer.alloc(0), { method: 'stored' });
  await deflated('assets/random2.bin', randomBytes(2 * MiB + 5));
  await writer.addEntry('assets/edge.bin', randomBytes(16 * 1024), { method: 'stored' });
  writer.finishEntries();
  await writer.writeTail();
  const bytes = sink.toBuffer();
  const offsets = new Map((await ZipReader.open(new BufferSource(bytes))).entries.map((e) => [e.name, e.dataOffset]));
  return { bytes, offsets };
}

async function sign(input: Buffer, options: Partial<SignApkOptions>): Promise<{ output: Buffer; result: SignApkResult }> {
  const sink = new MemorySink();
  const result = await signApk(new BufferSource(input), sink, { identity: await testIdentity('rsa-2048'), v1SignerName: 'test', minSdk: 23, ...options });
  return { output: sink.toBuffer(), result };
}

const onThread = { digestThreadAbove: 0 };
const inProcess = { digestThreadAbove: Infinity };

function zipInvalidNaming(name: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof SigningError, String(error));
    assert.equal(error.code, 'zip_invalid', error.message);
    assert.ok(error.message.includes(JSON.stringify(name)), error.message);
    return true;
  };
}

describe('v1 digests on a thread of their own', needsSharedFixtures(), () => {
  it('give the bytes and digests of the in-process path, and the output verifies', async () => {
    const { bytes } = await mixedApk();
    const here = await sign(bytes, inProcess);
    const there = await sign(bytes, onThread);
    assert.ok(there.output.equals(here.output), 'the same signed APK both ways');
    assert.deepEqual([...there.result.written], [...here.result.written]);
    const report = await verifyApk(new BufferSource(there.output), { minSdk: 23 });
    assert.equal(report.verified, true, JSON.stringify(report.errors));
  });

  for (const [name, side] of [['assets/random.bin', 'the thread'], ['assets/random2.bin', 'the main thread']] as const) {
    it(`refuse a large entry whose deflate data is corrupt, inflated by ${side}, as the in-process path does`, async () => {
      const { bytes, offsets } = await mixedApk();
      const at = offsets.get(name)! + MiB + 4096;
      bytes.fill(0xa5, at, at + 4096);
      const here = await sign(bytes, inProcess).catch((error: unknown) => error);
      await assert.rejects(sign(bytes, onThread), zipInvalidNaming(name));
      await assert.rejects(sign(bytes, onThread), (error) => (error as Error).message === (here as Error).message);
    });
  }

  it('refuse a large stored entry that fails its CRC-32', async () => {
    const { bytes, offsets } = await mixedApk();
    const at = offsets.get('assets/stored.bin')! + MiB;
    bytes[at] = bytes[at]! ^ 0x01;
    await assert.rejects(sign(bytes, inProcess), zipInvalidNaming('assets/stored.bin'));
    await assert.rejects(sign(bytes, onThread), zipInvalidNaming('assets/stored.bin'));
  });

  it('refuse a small entry that fails its CRC-32 on the main thread, beside the thread', async () => {
    const { bytes, offsets } = await mixedApk();
    const at = offsets.get('res/raw/small.txt')!;
    bytes[at] = bytes[at]! ^ 0x01;
    await assert.rejects(sign(bytes, onThread), zipInvalidNaming('res/raw/small.txt'));
  });

  it('stop with the signing when it is aborted', async () => {
    const { bytes } = await mixedApk();
    await assert.rejects(sign(bytes, { ...onThread, signal: AbortSignal.abort(new Error('canceled')) }), /canceled/);
  });
});

describe('the output read back by the digest thread', needsSharedFixtures(), () => {
  async function signToFile(input: Buffer, name: string): Promise<{ file: string; result: SignApkResult }> {
    const dir = testOutputDir('android-digest-thread');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, name);
    const sink = await FileSink.create(file);
    try {
      const result = await signApk(new BufferSource(input), sink, { identity: await testIdentity('rsa-2048'), v1SignerName: 'test', minSdk: 23, readBackForVerification: true, ...onThread });
      return { file, result };
    } finally {
      await sink.close();
    }
  }

  it('is taken only when the caller will verify', async () => {
    const { bytes } = await mixedApk();
    const dir = testOutputDir('android-digest-thread');
    mkdirSync(dir, { recursive: true });
    const sink = await FileSink.create(path.join(dir, 'no-read-back.apk'));
    try {
      const result = await signApk(new BufferSource(bytes), sink, { identity: await testIdentity('rsa-2048'), v1SignerName: 'test', minSdk: 23, ...onThread });
      assert.equal(result.readBack, null);
    } finally {
      await sink.close();
    }
  });

  it('gives the chunk digests of the file\'s start, which the verifier uses and checks', async () => {
    const { bytes } = await mixedApk();
    const openFiles = (): number => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0);
    const before = openFiles();
    const { file, result } = await signToFile(bytes, 'read-back.apk');
    assert.equal(openFiles(), before, 'the handle the thread read the output through is closed');
    const readBack = result.readBack;
    assert.ok(readBack !== null, 'a file sink and a thread: the start of the output is read back');
    assert.ok(readBack.end > 0 && readBack.end % MiB === 0, `whole chunks (${readBack.end})`);
    const chunks = readBack.chunks.get('CHUNKED_SHA256')!;
    assert.equal(chunks.length, readBack.end / MiB);
    const source = await FileSource.open(file);
    try {
      const report = await verifyApk(source, { minSdk: 23, written: result.written, readBack });
      assert.equal(report.verified, true, JSON.stringify(report.errors));
      // A wrong chunk digest in the read-back makes the recomputed content digest wrong: the
      // verifier does not take the read-back on trust.
      const wrong = new Map([['CHUNKED_SHA256' as const, chunks.map((c, i) => (i === 1 ? Buffer.alloc(c.length) : c))]]);
      const refused = await verifyApk(source, { minSdk: 23, written: result.written, readBack: { end: readBack.end, chunks: wrong } });
      assert.equal(refused.verified, false);
      assert.ok(refused.errors.some((e) => /content digest mismatch/.test(e.message)), JSON.stringify(refused.errors));
    } finally {
      await source.close();
    }
    const inMemory = await sign(bytes, { ...onThread, readBackForVerification: true });
    assert.equal(inMemory.result.readBack, null, 'a memory sink has no file to read back');
    assert.ok(readFileSync(file).equals(inMemory.output), 'the same bytes either way');
  });
});

describe('the sequential reader with lent blocks', () => {
  it('refills a block only once it is given back, and never has more than maxBlocks', async () => {
    const data = randomBytes(12 * MiB + 333);
    const allocated: Buffer[] = [];
    const held: Array<() => void> = [];
    let refilledWhileHeld = false;
    const outstanding = new Set<Buffer>();
    const lease: BlockLease = {
      maxBlocks: 5,
      allocate: (size) => {
        const block = Buffer.alloc(size);
        allocated.push(block);
        return block;
      },
      returned: (block) => {
        outstanding.add(block);
        // Given back later, out of turn: the reader must wait rather than refill it.
        return new Promise<void>((resolve) => held.push(() => {
          outstanding.delete(block);
          resolve();
        }));
      },
    };
    const source = {
      size: data.length,
      read: async (offset: number, length: number) => data.subarray(offset, offset + length),
      readInto: async (offset: number, target: Buffer) => {
        if ([...outstanding].some((block) => block.buffer === target.buffer)) refilledWhileHeld = true;
        data.copy(target, 0, offset, offset + target.length);
      },
      close: async () => {},
    };
    const reader = new SequentialReader(source, 0, data.length, lease);
    const release = setInterval(() => held.shift()?.(), 1);
    const pieces: Buffer[] = [];
    await reader.take(data.length, (piece) => void pieces.push(Buffer.from(piece)));
    clearInterval(release);
    assert.ok(Buffer.concat(pieces).equals(data), 'every byte, in order');
    assert.ok(allocated.length <= 5, `${allocated.length} blocks`);
    assert.equal(refilledWhileHeld, false, 'no block was read into while lent');
  });
});
