// Verifying Mach-O files streaming (stream-code.ts: page hashes taken as the file streams past,
// a stand-in holding only header and signature) gives the same report as verifying them whole,
// and still finds a changed code page.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { parseProvisioningProfile, type ProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpa } from '../../../../src/signing/ios/resign/index.ts';
import { allProblems, verifyIpa } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { streamCode } from '../../../../src/signing/ios/resign/stream-code.ts';
import { ZipReader } from '../../../../src/signing/zip/index.ts';
import { generatedApp, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

describe('streaming verification of Mach-O files', needsToolchain(), () => {
  const signed: Record<'deflated' | 'stored', Buffer> = { deflated: Buffer.alloc(0), stored: Buffer.alloc(0) };
  let app: GeneratedApp;
  before(async () => {
    const pki = testPki();
    for (const kind of ['deflated', 'stored'] as const) {
      app = generatedApp(`stream-verify-${kind}`, { store: kind === 'stored', watch: true });
      const profiles: ProvisioningProfile[] = [app.bundleId, app.extensionId, `${app.bundleId}.watchkitapp`].map((id) => parseProvisioningProfile(pki.mobileprovision({ bundleId: id })));
      const sink = new MemorySink();
      await resignIpa(new BufferSource(app.bytes), sink, { identity: pki.leaf, profiles, signingTime: new Date('2026-03-01T12:00:00Z'), workers: 0 });
      signed[kind] = sink.toBuffer();
    }
  });

  it('reports the same as verifying each file whole', async () => {
    for (const bytes of Object.values(signed)) {
      // The thin files do take the streaming path (fat ones are read whole).
      const zip = await ZipReader.open(new BufferSource(bytes));
      const streamedMain = await streamCode(zip.source, zip.getEntry(app.machO.find((n) => n.endsWith('/Signet'))!)!, zip.limits, { wholeFile: true });
      assert.ok(streamedMain !== undefined && streamedMain.digests !== undefined);
      const whole = await verifyIpa(new BufferSource(bytes), { streamAbove: Infinity });
      const streamed = await verifyIpa(new BufferSource(bytes), { streamAbove: 0 });
      assert.deepEqual(allProblems(streamed), []);
      assert.deepEqual(streamed, whole);
    }
  });

  it('finds a changed code page (with a CRC-32 made to match)', async () => {
    const bytes = Buffer.from(signed.stored);
    const zip = await ZipReader.open(new BufferSource(bytes));
    const entry = zip.getEntry(app.machO.find((n) => n.endsWith('/Signet'))!)!;
    assert.equal(entry.method, 0);
    // A byte in the middle of the code (not the header, not the signature).
    bytes[entry.dataOffset + 0x4100]! ^= 0x01;
    const crc = crc32(bytes.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize)) >>> 0;
    bytes.writeUInt32LE(crc, entry.localHeaderOffset + 14);
    const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    let at = bytes.readUInt32LE(eocd + 16);
    for (let i = 0; i < entry.index; i++) at += 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
    bytes.writeUInt32LE(crc, at + 16);
    for (const streamAbove of [0, Infinity]) {
      const problems = allProblems(await verifyIpa(new BufferSource(bytes), { streamAbove }));
      assert.ok(problems.some((p) => p.includes('/Signet') && /page \d+ hash does not match/.test(p)), `${streamAbove}: ${problems.join('\n')}`);
    }
  });
});
