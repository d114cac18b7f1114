// signPackage verifies an .ipa it re-signed from the re-signer's proof (verify-written.ts), not
// with a second full pass: its report must be exactly what the full independent verifier
// (`signet verify`) says of the same bytes, and a byte damaged on its way to the output — in an
// entry copied unchanged or in one written — must still fail the task as verification_failed.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { readCaDirectory } from '../../../src/signing/cms/index.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { verifyIpa } from '../../../src/signing/ios/verify-ipa/index.ts';
import { MemoryOutput, signPackage, type SignPackageRequest, type SignEnv } from '../../../src/signing/pipeline/index.ts';
import { describeBundles } from '../../../src/signing/pipeline/sign-ios.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { generatedApp, type GeneratedApp } from '../../support/ios-app.ts';
import { needsToolchain } from '../../support/macho-build.ts';
import { testPki } from '../../support/pki.ts';

const NOW = new Date('2026-03-01T12:00:00Z');

/** An output that flips one byte at an absolute position of what is written to it. */
class DamagingOutput extends MemoryOutput {
  readonly at: number;
  damaged = false;
  constructor(at: number) {
    super();
    this.at = at;
  }
  override async write(data: Buffer): Promise<void> {
    const start = this.position;
    if (this.at >= start && this.at < start + data.length) {
      const copy = Buffer.from(data);
      copy[this.at - start]! ^= 0x5a;
      this.damaged = true;
      return super.write(copy);
    }
    return super.write(data);
  }
}

describe('signPackage verifies an .ipa from the re-signer\'s proof', needsToolchain(), () => {
  const pki = testPki();
  let app: GeneratedApp;
  let request: SignPackageRequest;
  let env: SignEnv;
  let clean: Buffer;
  before(async () => {
    app = generatedApp('pipeline-proof');
    request = { platform: 'ios', identity: { p12: pki.p12(pki.leaf, { password: 'pw' }), password: 'pw' }, profiles: [{ id: 'prf_wild', bytes: pki.mobileprovision({ bundleId: '*' }) }] };
    env = { now: NOW, signingTime: NOW, machOThreads: 0, caCertificates: await readCaDirectory(pki.caDir) };
  });

  it('reports what the full verifier reports of the same bytes', async () => {
    const output = new MemoryOutput();
    const summary = await signPackage(request, new BufferSource(app.bytes), output, env);
    clean = output.toBuffer();
    const full = await verifyIpa(new BufferSource(clean), { now: NOW });
    assert.equal(full.verified, true);
    assert.deepEqual(summary.verification, describeBundles(full));
    assert.equal(summary.ios?.signer, full.signer ?? null);
    assert.equal(summary.ios?.bundles.length, full.bundles.length);
  });

  async function entryIn(bytes: Buffer, pick: (name: string) => boolean) {
    const zip = await ZipReader.open(new BufferSource(bytes));
    const entry = zip.entriesInFileOrder().find((e) => pick(e.name) && e.compressedSize > 16);
    assert.ok(entry, 'no such entry');
    return entry;
  }

  for (const [what, pick] of [
    ['an entry copied unchanged (a resource)', (n: string) => n.endsWith('.strings') || n.endsWith('.png') || n.endsWith('.txt')],
    ['an entry written (the main executable)', (n: string) => n === app.machO[0]],
  ] as const) {
    it(`fails verification_failed when ${what} is damaged on its way out`, async () => {
      assert.ok(clean, 'the clean run comes first');
      const entry = await entryIn(clean, pick);
      const output = new DamagingOutput(entry.dataOffset + Math.floor(entry.compressedSize / 2));
      await assert.rejects(signPackage(request, new BufferSource(app.bytes), output, env), (e: unknown) => e instanceof SigningError && e.code === 'verification_failed');
      assert.equal(output.damaged, true);
      // The damage is real: the full verifier refuses these bytes too.
      const full = await verifyIpa(new BufferSource(output.toBuffer()), { now: NOW }).catch(() => null);
      assert.ok(full === null || !full.verified);
    });
  }
});
