// The scan thread reading signed code back from the output as it is written (read-back.ts): the
// output is the same, the verifier gives the same report with it as without, and it uses a
// read-back only for the bytes the thread actually read.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { FileSink, MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource, FileSource, SIGNING_READS, type DataSource } from '../../../../src/signing/data-source.ts';
import { parseProvisioningProfile, type ProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpaProved, type ResignOptions, type ResignProof } from '../../../../src/signing/ios/resign/index.ts';
import type { WrittenCode } from '../../../../src/signing/ios/resign/read-back.ts';
import { allProblems, verifyIpa, verifyWritten } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { testOutputDir } from '../../../support/fixtures.ts';
import { generatedApp, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

const SIGNING_TIME = new Date('2026-03-01T12:00:00Z');

describe('reading signed code back for the verification', needsToolchain(), () => {
  const dir = testOutputDir('ios-read-back');
  let app: GeneratedApp;
  let profiles: ProvisioningProfile[];
  let options: ResignOptions;
  let inputFile: string;
  before(() => {
    const pki = testPki();
    app = generatedApp('read-back', { watch: true });
    profiles = [app.bundleId, app.extensionId, `${app.bundleId}.watchkitapp`].map((id) => parseProvisioningProfile(pki.mobileprovision({ bundleId: id })));
    // On the scan thread (only a file input has one), every Mach-O file streamed as it is written.
    options = { identity: pki.leaf, profiles, signingTime: SIGNING_TIME, workers: 0, scanThreadAbove: 0, streamAbove: 0 };
    mkdirSync(dir, { recursive: true });
    inputFile = path.join(dir, 'input.ipa');
    writeFileSync(inputFile, app.bytes);
  });

  /** Re-signs the app into `name` with the read-back on; the input and output stay open for the test. */
  async function signed(name: string): Promise<{ input: DataSource; output: DataSource; proof: ResignProof; close: () => Promise<void> }> {
    const input = await FileSource.open(inputFile, SIGNING_READS);
    const file = path.join(dir, name);
    const sink = await FileSink.create(file);
    const { proof } = await resignIpaProved(input, sink, { ...options, readBackForVerification: true }).finally(() => sink.close());
    const output = await FileSource.open(file, SIGNING_READS);
    return { input, output, proof, close: async () => (await output.close(), await input.close()) };
  }

  it('reads back every signed file, changes nothing in the output, and verifies as the full verifier does', async () => {
    const run = await signed('read-back.ipa');
    try {
      // Every signed Mach-O file was read back from the output (each streamed one ends with a
      // patched header, which flushes it to the file).
      for (const name of app.machO) {
        const taken = await run.proof.readBack.get(name);
        assert.ok(taken !== undefined, `${name} was not read back`);
        assert.equal(taken.code.size, taken.location.uncompressedSize);
      }
      // The same bytes as without a read-back.
      const plain = new MemorySink();
      await resignIpaProved(new BufferSource(app.bytes), plain, options);
      const bytes = Buffer.alloc(run.output.size);
      bytes.set(await run.output.read(0, run.output.size));
      assert.ok(bytes.equals(plain.toBuffer()));
      const written = await verifyWritten(run.output, run.input, run.proof);
      assert.deepEqual(allProblems(written), []);
      assert.deepEqual(written, await verifyIpa(run.output));
    } finally {
      await run.close();
    }
  });

  it('uses a read-back only for the bytes the thread read, and checks what it uses', async () => {
    const run = await signed('read-back-wrong.ipa');
    try {
      const framework = app.machO.find((n) => n.includes('.framework/'))!;
      const taken = (await run.proof.readBack.get(framework))!;
      // Page hashes that are not the code's: where the read-back stands for the entry, the
      // verifier must find them wrong (so it does check what it takes)…
      const wrongHashes: WrittenCode = { ...taken, code: { ...taken.code, pageHashes: taken.code.pageHashes.map(([type, hashes]) => [type, new Uint8Array(hashes.length)] as const) } };
      const found = allProblems(await verifyWritten(run.output, run.input, withReadBack(run.proof, framework, wrongHashes)));
      assert.ok(found.some((p) => p.includes(framework) && /page \d+ hash does not match/.test(p)), found.join('\n'));
      // …and ignore it where it was read elsewhere, or lacks the digests the framework's seal
      // needs: the verifier reads the file itself (whole, or streaming it past if it is large).
      const elsewhere: WrittenCode = { ...wrongHashes, location: { ...taken.location, dataOffset: taken.location.dataOffset + 1 } };
      const noDigests: WrittenCode = { ...taken, code: { ...taken.code, digests: undefined } };
      for (const ignored of [elsewhere, noDigests, undefined]) {
        for (const streamAbove of [undefined, 0]) {
          const report = await verifyWritten(run.output, run.input, withReadBack(run.proof, framework, ignored), streamAbove === undefined ? {} : { streamAbove });
          assert.deepEqual(allProblems(report), []);
        }
      }
    } finally {
      await run.close();
    }
  });

  it('reads nothing back unless asked to, or without a file to read', async () => {
    const input = await FileSource.open(inputFile, SIGNING_READS);
    try {
      const file = path.join(dir, 'not-asked.ipa');
      const sink = await FileSink.create(file);
      const { proof } = await resignIpaProved(input, sink, options).finally(() => sink.close());
      assert.equal(proof.readBack.size, 0);
      const memory = await resignIpaProved(input, new MemorySink(), { ...options, readBackForVerification: true });
      assert.equal(memory.proof.readBack.size, 0);
    } finally {
      await input.close();
    }
  });
});

function withReadBack(proof: ResignProof, name: string, code: WrittenCode | undefined): ResignProof {
  return { ...proof, readBack: new Map(proof.readBack).set(name, Promise.resolve(code)) };
}
