// The signer checking its own output (verifyApk's `written` option, verify/content-pass.ts): the
// signer's v1 digests stand in for inflating and hashing the entries again only where the
// recomputed v2/v3 content digest proves the bytes; anything else is taken from the file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { crc32, deflateRawSync } from 'node:zlib';
import { signApk, verifyApk, type SignApkOptions, type SignApkResult } from '../../../src/signing/android/index.ts';
import type { WrittenEntryDigest } from '../../../src/signing/android/verify/content-pass.ts';
import { MemorySink } from '../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { ZipReader, ZipWriter } from '../../../src/signing/zip/index.ts';
import { needsSharedFixtures } from '../../support/fixtures.ts';
import { apksigFixture, testIdentity } from '../../support/android-signing.ts';

async function sign(input: Buffer, options: Partial<SignApkOptions> = {}): Promise<{ output: Buffer; result: SignApkResult }> {
  const sink = new MemorySink();
  const result = await signApk(new BufferSource(input), sink, { identity: await testIdentity('rsa-2048'), v1SignerName: 'test', minSdk: 23, ...options });
  return { output: sink.toBuffer(), result };
}

/** golden-aligned-in.apk plus a stored and a large deflated entry of random bytes. */
async function input(): Promise<Buffer> {
  const zip = await ZipReader.open(new BufferSource(readFileSync(apksigFixture('golden/golden-aligned-in.apk'))));
  const sink = new MemorySink();
  const writer = new ZipWriter(sink, { allowZip64: false });
  for (const entry of zip.entriesInFileOrder()) await writer.addRaw(entry, zip);
  const stored = randomBytes(300_000);
  await writer.addEntry('assets/stored.bin', stored, { method: 'stored' });
  const data = randomBytes(3 * 1024 * 1024);
  await writer.addEntry('assets/large.bin', deflateRawSync(data), { method: 'deflate', precompressed: { crc32: crc32(data) >>> 0, uncompressedSize: data.length } });
  writer.finishEntries();
  await writer.writeTail();
  return sink.toBuffer();
}

/** `written` with one entry's digest replaced by a wrong one. */
function withWrongDigest(written: ReadonlyMap<string, WrittenEntryDigest>, name: string): Map<string, WrittenEntryDigest> {
  const copy = new Map(written);
  const known = copy.get(name)!;
  copy.set(name, { ...known, digest: Buffer.alloc(known.digest.length, 0x42) });
  return copy;
}

describe('verifyApk with the signer\'s written digests', needsSharedFixtures(), () => {
  it('the signer reports a digest for every entry it wrote, at the offset it wrote it', async () => {
    const { output, result } = await sign(await input());
    const zip = await ZipReader.open(new BufferSource(output));
    const large = zip.getEntry('assets/large.bin')!;
    assert.deepEqual({ ...result.written.get('assets/large.bin'), digest: undefined }, { dataOffset: large.dataOffset, compressedSize: large.compressedSize, algorithm: 'sha256', digest: undefined });
    assert.ok(result.written.has('AndroidManifest.xml'));
    assert.ok(!result.written.has('META-INF/MANIFEST.MF'));
    const report = await verifyApk(new BufferSource(output), { minSdk: 23, written: result.written });
    assert.equal(report.verified, true, JSON.stringify(report.errors));
  });

  it('uses them where the content digest proves the bytes (a wrong one is caught by the JAR manifest)', async () => {
    const { output, result } = await sign(await input());
    const report = await verifyApk(new BufferSource(output), { minSdk: 23, written: withWrongDigest(result.written, 'assets/large.bin') });
    assert.equal(report.verified, false);
    assert.ok(report.errors.some((e) => e.scheme === 'v1' && /large\.bin/.test(e.message)), JSON.stringify(report.errors));
  });

  it('ignores a digest that does not describe the entry where it now lies', async () => {
    const { output, result } = await sign(await input());
    const moved = withWrongDigest(result.written, 'assets/stored.bin');
    moved.set('assets/stored.bin', { ...moved.get('assets/stored.bin')!, dataOffset: 4 });
    const report = await verifyApk(new BufferSource(output), { minSdk: 23, written: moved });
    assert.equal(report.verified, true, JSON.stringify(report.errors));
  });

  it('takes every digest from the file when the bytes changed after signing', async () => {
    const { output, result } = await sign(await input());
    const zip = await ZipReader.open(new BufferSource(output));
    const stored = zip.getEntry('assets/stored.bin')!;
    const tampered = Buffer.from(output);
    tampered[stored.dataOffset + 1000] = tampered[stored.dataOffset + 1000]! ^ 0xff;
    // A careful forger also fixes the CRC-32, in the local header and the central directory.
    const crc = crc32(tampered.subarray(stored.dataOffset, stored.dataOffset + stored.compressedSize)) >>> 0;
    tampered.writeUInt32LE(crc, stored.localHeaderOffset + 14);
    tampered.writeUInt32LE(crc, zip.geometry.centralDirectoryOffset + output.subarray(zip.geometry.centralDirectoryOffset).indexOf(stored.centralRecord) + 16);
    const report = await verifyApk(new BufferSource(tampered), { minSdk: 23, written: result.written });
    assert.equal(report.verified, false);
    assert.ok(report.errors.some((e) => e.scheme === 'v2' && /content digest mismatch/.test(e.message)), JSON.stringify(report.errors));
    // The signer's (now stale) digest was not trusted: v1 sees the change too.
    assert.ok(report.errors.some((e) => e.scheme === 'v1' && /stored\.bin/.test(e.message)), JSON.stringify(report.errors));
  });

  it('without v2/v3 there is no proof: a v1-only output is verified from its bytes alone', async () => {
    const { output, result } = await sign(await input(), { schemes: { v1: true, v2: false, v3: false } });
    const report = await verifyApk(new BufferSource(output), { minSdk: 23, written: withWrongDigest(result.written, 'assets/large.bin') });
    assert.equal(report.verified, true, JSON.stringify(report.errors));
  });

  it('the signer refuses an entry whose CRC-32 is wrong rather than vouch for it', async () => {
    const bytes = await input();
    const zip = await ZipReader.open(new BufferSource(bytes));
    const stored = zip.getEntry('assets/stored.bin')!;
    // Flip a data byte: the sizes still agree, only the CRC-32 no longer does.
    bytes[stored.dataOffset + 10] = bytes[stored.dataOffset + 10]! ^ 0x01;
    await assert.rejects(sign(bytes), (error: unknown) => error instanceof SigningError && error.code === 'zip_invalid' && /stored\.bin.*CRC-32/.test(error.message));
  });
});
