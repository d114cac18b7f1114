// Every binary structure the Android engine parses and builds round-trips, and the builders
// reproduce apksig's bytes where a golden file shows them.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { buildSigningBlock, paddingBeforeBlock } from '../../../src/signing/android/block/build.ts';
import { V2_BLOCK_ID, V3_BLOCK_ID, VERITY_PADDING_BLOCK_ID } from '../../../src/signing/android/block/constants.ts';
import { findSigningBlock, parsePairs } from '../../../src/signing/android/block/parse.ts';
import { CHUNK_SIZE, ChunkedDigester, computeContentDigests } from '../../../src/signing/android/content-digest.ts';
import { encodeLineage, parseLineageFile } from '../../../src/signing/android/lineage/lineage.ts';
import { encodeSchemeBlock, encodeSignedData, encodeSigner } from '../../../src/signing/android/schemes/build.ts';
import { parseSchemeBlock } from '../../../src/signing/android/schemes/parse.ts';
import { alignedExtra, DEFAULT_ALIGNMENT, inputEntryAlignment } from '../../../src/signing/zip/index.ts';
import { individualSection, mainSection } from '../../../src/signing/android/v1/manifest-build.ts';
import { getAttribute, parseManifest } from '../../../src/signing/android/v1/manifest-parse.ts';
import { safeSignerName } from '../../../src/signing/android/index.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { apksigFixture } from '../../support/android-signing.ts';

async function goldenBlock() {
  const apk = readFileSync(apksigFixture('golden/golden-aligned-v1v2v3-out.apk'));
  const lookup = await findSigningBlock(new BufferSource(apk), apk.readUInt32LE(apk.length - 22 + 16));
  assert.ok(lookup.found);
  return lookup.block;
}

describe('APK Signing Block', needsSharedFixtures(), () => {
  it('parses the golden block and rebuilds it byte for byte (padding to 4096 included)', async () => {
    const block = await goldenBlock();
    assert.equal(block.offset, 8192);
    assert.deepEqual(block.pairs.map((p) => p.id), [V2_BLOCK_ID, V3_BLOCK_ID, VERITY_PADDING_BLOCK_ID]);
    const rebuilt = buildSigningBlock(block.pairs.filter((p) => p.id !== VERITY_PADDING_BLOCK_ID));
    assert.ok(rebuilt.equals(block.bytes));
  });

  it('round-trips arbitrary pairs, always 4096-aligned, and stops at a malformed pair', () => {
    for (const sizes of [[0], [1, 2, 3], [4060], [4061], [5000, 7]]) {
      const pairs = sizes.map((size, i) => ({ id: 0x1000 + i, value: randomBytes(size) }));
      const block = buildSigningBlock(pairs);
      assert.equal(block.length % 4096, 0);
      const parsed = parsePairs(block.subarray(8, block.length - 24));
      assert.equal(parsed.malformed, null);
      assert.deepEqual(parsed.pairs.slice(0, pairs.length), pairs);
    }
    const broken = Buffer.alloc(20);
    broken.writeBigUInt64LE(1000n, 0);
    assert.match(parsePairs(broken).malformed ?? '', /size out of range/);
    assert.deepEqual([0, 1, 4095, 4096, 4097].map(paddingBeforeBlock), [0, 4095, 1, 0, 4095]);
  });

  it('v2 and v3 scheme blocks decode and re-encode to the same bytes', async () => {
    const block = await goldenBlock();
    for (const [scheme, id] of [['v2', V2_BLOCK_ID], ['v3', V3_BLOCK_ID]] as const) {
      const value = block.pairs.find((p) => p.id === id)!.value;
      const signers = parseSchemeBlock(scheme, value);
      assert.equal(signers.length, 1);
      const signer = signers[0]!;
      const sd = signer.signedData;
      const signedData = encodeSignedData(scheme, {
        digests: sd.digests, certificates: sd.certificates, attributes: sd.attributes,
        ...(scheme === 'v2' ? {} : { minSdk: sd.minSdk!, maxSdk: sd.maxSdk! }),
      });
      assert.ok(signedData.equals(signer.signedDataBytes), `${scheme} signed data`);
      const encoded = encodeSigner(scheme, {
        signedData, signatures: signer.signatures, publicKey: signer.publicKey,
        ...(scheme === 'v2' ? {} : { minSdk: signer.minSdk!, maxSdk: signer.maxSdk! }),
      });
      assert.ok(encodeSchemeBlock([encoded]).equals(value), `${scheme} block`);
      if (scheme === 'v2') assert.deepEqual(sd.attributes.map((a) => [a.id, a.data.readUInt32LE(0)]), [[0xbeeff00d, 3]]);
      else assert.deepEqual([signer.minSdk, signer.maxSdk], [24, 0x7fffffff]);
    }
  });

  it('proof-of-rotation lineage files parse, verify and re-encode', () => {
    const file = readFileSync(sharedFixture('android/keys/apksig/rsa-2048-lineage-3-signers')!);
    const nodes = parseLineageFile(file);
    assert.equal(nodes.length, 3);
    assert.equal(nodes[0]!.parentSignatureAlgorithm, 0);
    const inner = file.subarray(12, 12 + file.readUInt32LE(8));
    assert.ok(encodeLineage(nodes).equals(inner));
    const tampered = Buffer.from(file);
    tampered[tampered.length - 10]! ^= 0xff;
    assert.throws(() => parseLineageFile(tampered), /does not verify|cannot be parsed|mismatch/);
  });
});

describe('JAR manifest', needsSharedFixtures(), () => {
  it('rebuilds the golden MANIFEST.MF sections from its parse', async () => {
    const { ZipReader } = await import('../../../src/signing/zip/index.ts');
    const zip = await ZipReader.open(new BufferSource(readFileSync(apksigFixture('golden/golden-aligned-v1v2v3-out.apk'))));
    const bytes = await zip.readEntry(zip.getEntry('META-INF/MANIFEST.MF')!, 1 << 20);
    const parsed = parseManifest(bytes, 'MANIFEST.MF');
    const version = getAttribute(parsed.main, 'manifest-version')!;
    const rebuilt = Buffer.concat([
      mainSection('Manifest-Version', version, parsed.main.attributes.filter(([n]) => n !== 'Manifest-Version')),
      ...parsed.sections.map((s) => individualSection(s.name, s.attributes.filter(([n]) => n !== 'Name'))),
    ]);
    assert.ok(rebuilt.equals(bytes));
  });

  it('wraps long UTF-8 lines at 70 bytes and reads them back', () => {
    const name = `assets/${'é'.repeat(50)}/${'x'.repeat(90)}.bin`;
    const section = individualSection(name, [['SHA-256-Digest', 'A'.repeat(44)]]);
    for (const line of section.toString('latin1').split('\r\n')) assert.ok(Buffer.byteLength(line, 'latin1') <= 70);
    const parsed = parseManifest(Buffer.concat([mainSection('Manifest-Version', '1.0', []), section]), 'test');
    assert.equal(parsed.sections[0]!.name, name);
    assert.ok(parsed.sections[0]!.bytes.equals(section));
  });

  it('reads CRLF, LF and CR line ends and continuation lines alike, and refuses a header that is not UTF-8', () => {
    const lines = ['Manifest-Version: 1.0', '', `Name: res/${'a'.repeat(60)}`, ` ${'b'.repeat(40)}.png`, 'SHA-256-Digest: AAAA', '', 'Name: x', 'SHA-256-Digest: BBBB', ''];
    const expected = [[`res/${'a'.repeat(60)}${'b'.repeat(40)}.png`, 'AAAA'], ['x', 'BBBB']];
    for (const end of ['\r\n', '\n', '\r']) {
      const parsed = parseManifest(Buffer.from(lines.join(end), 'latin1'), 'test');
      assert.deepEqual(parsed.sections.map((s) => [s.name, getAttribute(s, 'sha-256-digest')]), expected, JSON.stringify(end));
      assert.equal(getAttribute(parsed.main, 'MANIFEST-VERSION'), '1.0');
    }
    const bad = Buffer.from('Manifest-Version: 1.0\r\n\r\nName: \xff\r\n\r\n', 'latin1');
    assert.throws(() => parseManifest(bad, 'test'), /not valid UTF-8/);
  });

  it('sanitises v1 signer names as apksig does', () => {
    assert.equal(safeSignerName('rsa-2048'), 'RSA-2048');
    assert.equal(safeSignerName('my release key'), 'MY_RELEA');
    assert.equal(safeSignerName('ünïcode'), '_N_CODE');
  });
});

// The signer realigns moved entries with the zip layer's apksig rules (src/signing/zip/alignment.ts);
// these are the values apksig's golden outputs hold, so a change there cannot go unnoticed here.
describe('alignment (shared with the zip writer)', () => {
  const pages = (libraryPageAlignment: number) => ({ ...DEFAULT_ALIGNMENT, libraryPageAlignment });
  it('matches the 0xd935 fields in apksig golden output', () => {
    // classes.dex: LFH at 695, name 11 bytes, old field 35d9 0500 0400 000000 (apksig realigns to 4).
    const old = Buffer.from('35d905000400000000', 'hex');
    assert.equal(inputEntryAlignment({ name: 'classes.dex', method: 0, localExtra: old }, pages(4096)), 4);
    assert.equal(alignedExtra(old, 695 + 30 + 11, 4).toString('hex'), '35d9040004000000');
    // lib/armeabi/fake.so: LFH at 2340, page aligned: data lands at exactly 4096.
    const extra = alignedExtra(Buffer.alloc(0), 2340 + 30 + 19, 4096);
    assert.equal(2340 + 30 + 19 + extra.length, 4096);
    assert.equal(extra.subarray(0, 6).toString('hex'), '35d9a7060010');
    assert.equal(inputEntryAlignment({ name: 'lib/x86/a.so', method: 0, localExtra: Buffer.alloc(0) }, pages(16384)), 16384);
    assert.equal(inputEntryAlignment({ name: 'lib/x86/a.so', method: 8, localExtra: Buffer.alloc(0) }, pages(16384)), 1);
    // zipalign's zero padding (id 0, size 0) is dropped; other fields are kept in front.
    const mixed = Buffer.concat([Buffer.from('cafe0200abcd', 'hex'), Buffer.alloc(4)]);
    assert.equal(alignedExtra(mixed, 100, 4).subarray(0, 6).toString('hex'), 'cafe0200abcd');
    // A malformed or too short 0xd935 field falls back to the name's default (apksig).
    assert.equal(inputEntryAlignment({ name: 'a.bin', method: 0, localExtra: Buffer.from('35d90100ff', 'hex') }, pages(4096)), 4);
    assert.equal(inputEntryAlignment({ name: 'a.so', method: 0, localExtra: Buffer.from('35d90900ff', 'hex') }, pages(4096)), 4096);
  });
});

describe('chunked content digest', () => {
  it('is independent of how bytes are fed and matches a direct computation', async () => {
    const sections = [randomBytes(CHUNK_SIZE * 2 + 17), randomBytes(5), Buffer.alloc(0), randomBytes(CHUNK_SIZE)];
    const reference = (() => {
      const chunks: Buffer[] = [];
      for (const section of sections) {
        for (let o = 0; o < section.length; o += CHUNK_SIZE) {
          const chunk = section.subarray(o, o + CHUNK_SIZE);
          const prefix = Buffer.alloc(5);
          prefix[0] = 0xa5;
          prefix.writeUInt32LE(chunk.length, 1);
          chunks.push(createHash('sha256').update(prefix).update(chunk).digest());
        }
      }
      const prefix = Buffer.alloc(5);
      prefix[0] = 0x5a;
      prefix.writeUInt32LE(chunks.length, 1);
      return createHash('sha256').update(prefix).update(Buffer.concat(chunks)).digest();
    })();
    const fromSources = await computeContentDigests(sections.map((s) => new BufferSource(s)), ['CHUNKED_SHA256']);
    assert.ok(fromSources.get('CHUNKED_SHA256')!.equals(reference));
    const digester = new ChunkedDigester(['CHUNKED_SHA256', 'CHUNKED_SHA512']);
    for (const section of sections) {
      for (let o = 0; o < section.length; o += 777_777) digester.update(section.subarray(o, o + 777_777));
      digester.endSection();
    }
    assert.ok((await digester.digests()).get('CHUNKED_SHA256')!.equals(reference));
    // Whole chunks in one piece are hashed where they lie (the signer's output batches), also
    // after a partly filled chunk and with every other chunk on the thread pool.
    for (const parallel of [false, true]) {
      const whole = new ChunkedDigester(['CHUNKED_SHA256'], { parallel });
      for (const section of sections) {
        whole.update(section.subarray(0, 3));
        whole.update(section.subarray(3));
        whole.endSection();
      }
      assert.ok((await whole.digests()).get('CHUNKED_SHA256')!.equals(reference), `parallel: ${parallel}`);
      const aligned = new ChunkedDigester(['CHUNKED_SHA256'], { parallel });
      for (const section of sections) {
        aligned.update(section);
        aligned.endSection();
      }
      assert.ok((await aligned.digests()).get('CHUNKED_SHA256')!.equals(reference), `parallel: ${parallel}`);
    }
  });
});
