// Issue 12 §7: an app whose executable is shorter than a Mach-O header (64 bytes) crashed the
// re-signer's inflater ("options.chunkSize … Received 1") instead of failing with macho_invalid.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { parseProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpa } from '../../../../src/signing/ios/resign/index.ts';
import { testPki } from '../../../support/pki.ts';
import { buildZip } from '../../../support/zip-builder.ts';

const PLIST = `<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.tiny</string><key>CFBundleExecutable</key><string>Tiny</string></dict></plist>`;

// What each truncation is: too short to be recognised as Mach-O at all, a header cut short, or a
// complete header without the __LINKEDIT segment a signature needs.
const EXPECTED: Record<number, string> = { 4: 'ipa_invalid', 10: 'macho_invalid', 31: 'macho_invalid', 63: 'macho_unsupported' };

for (const size of [4, 10, 31, 63]) {
  for (const method of [0, 8] as const) {
    it(`refuses a ${size}-byte executable (${method === 0 ? 'stored' : 'deflated'}) with ${EXPECTED[size]}`, async () => {
      const pki = testPki();
      const ipa = buildZip([
        { name: 'Payload/Tiny.app/Info.plist', data: PLIST, method: 8 },
        // MH_MAGIC_64 (little-endian) and then nothing: a Mach-O cut short inside its header.
        { name: 'Payload/Tiny.app/Tiny', data: Buffer.concat([Buffer.from([0xcf, 0xfa, 0xed, 0xfe]), Buffer.alloc(64)]).subarray(0, size), method },
      ]).bytes;
      const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.example.tiny' }));
      await assert.rejects(resignIpa(new BufferSource(ipa), new MemorySink(), { identity: pki.leaf, profiles: [profile], workers: 0 }), (error: unknown) => {
        assert.ok(error instanceof SigningError, String(error));
        assert.equal(error.code, EXPECTED[size], error.message);
        return true;
      });
    });
  }
}

it('refuses a deflated Mach-O that inflates past its declared size instead of waiting forever', async () => {
  const { readMachO } = await import('../../../../src/signing/ios/resign/read-macho.ts');
  const { ZipReader } = await import('../../../../src/signing/zip/index.ts');
  const { randomBytes } = await import('node:crypto');
  const { deflateRawSync } = await import('node:zlib');
  // Headers say 1000 bytes; the stream holds 2 MiB of incompressible data, enough to fill the
  // inflater's buffer so the feeding side is waiting for 'drain' when the output is refused.
  const rawData = deflateRawSync(randomBytes(2 * 1024 * 1024));
  const zip = await ZipReader.open(new BufferSource(buildZip([{ name: 'Payload/X.app/X', data: Buffer.alloc(1000), rawData, method: 8 }]).bytes));
  const entry = zip.getEntry('Payload/X.app/X')!;
  await assert.rejects(readMachO(zip, entry), (error: unknown) => error instanceof SigningError && error.code === 'zip_invalid');
});
