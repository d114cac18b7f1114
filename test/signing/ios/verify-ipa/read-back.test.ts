// Reading signed Mach-O files back on the helper thread as soon as the re-signer writes them
// (read-back.ts, helper/helper-thread.ts): the verifier's report is the one the full verifier
// gives of the same bytes, the early reads are used only for the very bytes they read, and the
// helper thread streams a file exactly as the calling thread does.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { FileSource, SIGNING_READS, type DataSource } from '../../../../src/signing/data-source.ts';
import { HelperThread } from '../../../../src/signing/ios/helper/index.ts';
import { parseProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpaProved, type ResignProof } from '../../../../src/signing/ios/resign/index.ts';
import { allProblems, ReadBack, verifyIpa, verifyWritten, type VerifyIpaOptions } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { streamCode } from '../../../../src/signing/ios/verify-ipa/stream-code.ts';
import { FileOutput } from '../../../../src/signing/pipeline/index.ts';
import { DEFAULT_ZIP_LIMITS, ZipReader, type ZipEntry } from '../../../../src/signing/zip/index.ts';
import { generatedApp, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testOutputDir } from '../../../support/fixtures.ts';
import { testPki } from '../../../support/pki.ts';

const SIGNING_TIME = new Date('2026-03-01T12:00:00Z');

for (const store of [true, false]) describe(`reading signed code back on the helper thread (${store ? 'stored' : 'deflated'})`, needsToolchain(), () => {
  const pki = testPki();
  const dir = testOutputDir('read-back', store ? 'stored' : 'deflated');
  const helpers: HelperThread[] = [];
  const sources: DataSource[] = [];
  let app: GeneratedApp;
  let input: FileSource;
  let outputPath: string;
  let proof: ResignProof;
  let readBack: ReadBack;

  const open = async (file: string): Promise<FileSource> => {
    const source = await FileSource.open(file, SIGNING_READS);
    sources.push(source);
    return source;
  };
  /** verifyWritten of `file`, counting the files whose early read it took. */
  const verify = async (file: string, streamCodeOf: VerifyIpaOptions['streamCode']) => {
    let used = 0;
    const report = await verifyWritten(await open(file), input, proof, {
      streamCode: (entry, wholeFile) => {
        const read = streamCodeOf?.(entry, wholeFile);
        if (read !== undefined) used++;
        return read;
      },
    });
    return { report, used };
  };

  before(async () => {
    app = generatedApp(`read-back-${store ? 'stored' : 'deflated'}`, { watch: true, store });
    mkdirSync(dir, { recursive: true });
    const inputPath = path.join(dir, 'input.ipa');
    writeFileSync(inputPath, app.bytes);
    input = await open(inputPath);
    const profiles = [app.bundleId, app.extensionId, `${app.bundleId}.watchkitapp`].map((id) => parseProvisioningProfile(pki.mobileprovision({ bundleId: id })));
    outputPath = path.join(dir, 'output.ipa');
    const output = await FileOutput.create(outputPath);
    const helper = new HelperThread();
    helpers.push(helper);
    // Every file read back (the test app's code is small); resources hashed on the thread, which
    // starts it: the read-back uses only a running thread.
    readBack = new ReadBack(helper, outputPath, () => output.flush(), { from: 0 });
    try {
      ({ proof } = await resignIpaProved(input, output, { identity: pki.leaf, profiles, signingTime: SIGNING_TIME, workers: 0, streamAbove: 0, scanThreadAbove: 0, helper, codeWritten: readBack.written }));
    } finally {
      await output.close();
    }
  });
  after(async () => {
    for (const helper of helpers) await helper.close();
    for (const source of sources) await source.close();
  });

  it('verifies from the files read back: the full verifier\'s report of the same bytes', async () => {
    const { report, used } = await verify(outputPath, readBack.streamCode);
    assert.deepEqual(allProblems(report), []);
    assert.equal(used, app.machO.length, 'every signed file was read back and used');
    assert.deepEqual(report, await verifyIpa(await open(outputPath)));
  });

  // (Stored code only: a byte changed in place.)
  if (store) it('uses an early read only for the bytes it read: a changed code page (CRC-32 made to match) is found', async () => {
    const bytes = readFileSync(outputPath);
    const zip = await ZipReader.open(await open(outputPath));
    const entry = zip.getEntry(app.machO.find((n) => n.endsWith('/Signet'))!)!;
    // A byte of the first code page after the header, with the entry's CRC-32 fixed in both
    // headers: the zip is sound, only the page hash can tell.
    const at = entry.dataOffset + 4096 + 17;
    bytes[at]! ^= 0x01;
    const crc = crc32(bytes.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize)) >>> 0;
    bytes.writeUInt32LE(crc, entry.localHeaderOffset + 14);
    const central = bytes.indexOf(entry.centralRecord);
    assert.ok(central > 0);
    bytes.writeUInt32LE(crc, central + 16);
    const damaged = path.join(dir, 'damaged.ipa');
    writeFileSync(damaged, bytes);
    const { report, used } = await verify(damaged, readBack.streamCode);
    assert.equal(used, app.machO.length - 1, 'the changed entry is read again');
    assert.ok(allProblems(report).some((p) => p.includes(entry.name) && /page|hash/i.test(p)), allProblems(report).join('\n'));
  });

  it('reads nothing back while the helper thread is not running, nor below its size', async () => {
    const idle = new HelperThread();
    helpers.push(idle);
    const byIdle = new ReadBack(idle, outputPath, async () => {}, { from: 0 });
    const running = helpers[0]!;
    const bySize = new ReadBack(running, outputPath, async () => {}, { from: Number.MAX_SAFE_INTEGER });
    const zip = await ZipReader.open(await open(outputPath));
    for (const name of app.machO) {
      const entry = zip.getEntry(name)!;
      await byIdle.written(entry, true);
      await bySize.written(entry, true);
      assert.equal(byIdle.streamCode(entry, true), undefined);
      assert.equal(bySize.streamCode(entry, true), undefined);
    }
    assert.equal(idle.started, false);
  });

  it('gives a read without whole-file digests to no one who needs them', async () => {
    const zip = await ZipReader.open(await open(outputPath));
    const entry = zip.getEntry(app.machO[0]!)!;
    const partial = new ReadBack(helpers[0]!, outputPath, async () => {}, { from: 0 });
    await partial.written(entry, false);
    assert.equal(partial.streamCode(entry, true), undefined);
    assert.ok(partial.streamCode(entry, false) !== undefined);
    const moved: ZipEntry = { ...entry, dataOffset: entry.dataOffset + 1 };
    assert.equal(partial.streamCode(moved, false), undefined);
  });

  it('streams a file on the thread exactly as on the calling thread', async () => {
    const source = await open(outputPath);
    const zip = await ZipReader.open(source);
    for (const name of app.machO) {
      const entry = zip.getEntry(name)!;
      const here = await streamCode(source, DEFAULT_ZIP_LIMITS, entry, true);
      const there = await helpers[0]!.streamCode(outputPath, DEFAULT_ZIP_LIMITS, entry, true);
      assert.equal(there === undefined, here === undefined, name);
      if (here === undefined || there === undefined) continue;
      assert.deepEqual(there, here, name);
    }
  });

  it('fails what is pending when closed, and every job after', async () => {
    const helper = new HelperThread();
    helpers.push(helper);
    const zip = await ZipReader.open(await open(outputPath));
    const pending = helper.streamCode(outputPath, DEFAULT_ZIP_LIMITS, zip.getEntry(app.machO[0]!)!, true);
    await helper.close();
    await assert.rejects(pending, /closed|exited/);
    await assert.rejects(helper.streamCode(outputPath, DEFAULT_ZIP_LIMITS, zip.getEntry(app.machO[0]!)!, true), /closed/);
    assert.equal(helper.started, false);
  });
});
