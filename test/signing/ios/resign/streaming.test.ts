// Large Mach-O files are signed streaming (resign/streamed-output.ts), small ones in memory; the
// .ipa must not depend on which. Forcing every Mach-O file onto the streaming path (streamAbove
// 0) must give the same bytes and report as keeping all in memory, for deflated and stored
// entries, nested bundles whose parents seal the streamed executables, a watch app, and
// third-party apps (old signatures with entitlements, fat binaries, which stay in memory).
// (Both paths deflate in the same 256 KiB pieces at the same level, zip/deflate-pieces.ts, so
// even the compressed bytes are the same.)
// A sink that cannot patch headers gets the in-memory path, never a data descriptor.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { MemorySink, type DataSink } from '../../../../src/signing/data-sink.ts';
import { BufferSource, FileSource, SIGNING_READS } from '../../../../src/signing/data-source.ts';
import { parseProvisioningProfile, type ProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { plistDict, plistString } from '../../../../src/signing/plist/index.ts';
import { resignIpa, type ResignOptions, type ResignResult } from '../../../../src/signing/ios/resign/index.ts';
import { allProblems, verifyIpa } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { ZipReader } from '../../../../src/signing/zip/index.ts';
import { FLAG_DATA_DESCRIPTOR } from '../../../../src/signing/zip/format.ts';
import { needsSharedFixtures, sharedFixture, testOutputDir } from '../../../support/fixtures.ts';
import { generatedApp, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';
import { opensslVerifySlices } from '../codesign/oracles.ts';

const SIGNING_TIME = new Date('2026-03-01T12:00:00Z');

async function resign(input: Buffer, options: ResignOptions, sink: DataSink = new MemorySink()): Promise<{ bytes: Buffer; result: ResignResult }> {
  const result = await resignIpa(new BufferSource(input), sink, { signingTime: SIGNING_TIME, workers: 0, ...options });
  return { bytes: (sink as MemorySink).toBuffer(), result };
}

async function assertStreamingSame(input: Buffer, options: ResignOptions, label: string): Promise<Buffer> {
  const memory = await resign(input, { ...options, streamAbove: Infinity });
  const streamed = await resign(input, { ...options, streamAbove: 0 });
  assert.deepEqual(streamed.result, memory.result, `${label}: report`);
  assert.ok(streamed.bytes.equals(memory.bytes), `${label}: streamed and in-memory signing give different archives`);
  const report = await verifyIpa(new BufferSource(streamed.bytes));
  assert.deepEqual(allProblems(report), [], label);
  return streamed.bytes;
}

describe('streaming re-signing of large Mach-O files', needsToolchain(), () => {
  let app: GeneratedApp;
  let stored: GeneratedApp;
  let profiles: ProvisioningProfile[];
  before(() => {
    const pki = testPki();
    app = generatedApp('streaming', { watch: true });
    stored = generatedApp('streaming-stored', { store: true });
    profiles = [app.bundleId, app.extensionId, `${app.bundleId}.watchkitapp`].map((id) => parseProvisioningProfile(pki.mobileprovision({ bundleId: id })));
  });

  it('gives the same archive as in-memory signing: deflated entries, nested bundles, a watch app', async () => {
    const bytes = await assertStreamingSame(app.bytes, { identity: testPki().leaf, profiles }, 'deflated');
    // Streaming did happen: each streamed entry's local header was patched once written.
    const sink = new MemorySink();
    const patched: number[] = [];
    const writeAt = sink.writeAt.bind(sink);
    sink.writeAt = async (offset, data) => {
      patched.push(offset);
      await writeAt(offset, data);
    };
    await resign(app.bytes, { identity: testPki().leaf, profiles, streamAbove: 0 }, sink);
    // The app's own executable (deflated, its old entitlements carried over) also had its header
    // put in place once its signature was built: it was signed in one pass over the entry.
    assert.equal(patched.length, app.machO.length + 1);
    // Streamed entries got exact headers (patched in place), like every other entry.
    const zip = await ZipReader.open(new BufferSource(bytes));
    for (const name of app.machO) {
      assert.equal(zip.getEntry(name)!.flags & FLAG_DATA_DESCRIPTOR, 0, name);
      // openssl: each streamed signature's CMS verifies over its CodeDirectory.
      assert.deepEqual(opensslVerifySlices(await zip.readEntry(zip.getEntry(name)!, 1 << 24)), [], name);
    }
  });

  it('gives the same archive for stored entries and with a renamed bundle id', async () => {
    await assertStreamingSame(stored.bytes, { identity: testPki().leaf, profiles: [parseProvisioningProfile(testPki().mobileprovision({ bundleId: '*' }))], overrides: { bundleId: 'com.example.renamed' } }, 'stored');
  });

  it('gives the same archive re-signing signed code (entitlements carried over) and with --entitlements', async () => {
    const pki = testPki();
    // Signed once: every executable now has a signature with entitlements to carry over (the
    // streamed path reads it from the end of the file; frameworks', which nothing needs, not).
    const signed = (await resign(app.bytes, { identity: pki.leaf, profiles })).bytes;
    // Now with a profile that also grants push: carried-over entitlements (which lack it) keep
    // it out — reading the old signature matters; requested ones put it in.
    const push = parseProvisioningProfile(pki.mobileprovision({ bundleId: app.bundleId, apsEnvironment: 'production' }));
    const withPush = [push, ...profiles.slice(1)];
    await assertStreamingSame(signed, { identity: pki.leaf, profiles: withPush }, 're-sign');
    const carried = await resign(signed, { identity: pki.leaf, profiles: withPush, streamAbove: 0 });
    assert.equal((carried.result.bundles.at(-1)!.entitlements as { value: Map<string, unknown> }).value.has('aps-environment'), false);
    const requested = plistDict([['aps-environment', plistString('production')]]);
    await assertStreamingSame(signed, { identity: pki.leaf, profiles: withPush, entitlements: requested }, '--entitlements');
  });

  it('gives the same archive with the resources hashed on a thread of their own', async () => {
    const file = path.join(testOutputDir('ios-resign'), 'scan-thread-input.ipa');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, app.bytes);
    const source = await FileSource.open(file, SIGNING_READS);
    try {
      const options: ResignOptions = { identity: testPki().leaf, profiles, signingTime: SIGNING_TIME, workers: 0 };
      const inProcess = new MemorySink();
      const onThread = new MemorySink();
      const inProcessResult = await resignIpa(source, inProcess, { ...options, scanThreadAbove: Infinity });
      const onThreadResult = await resignIpa(source, onThread, { ...options, scanThreadAbove: 0 });
      assert.deepEqual(onThreadResult, inProcessResult);
      assert.ok(onThread.toBuffer().equals(inProcess.toBuffer()));
    } finally {
      await source.close();
    }
  });

  it('uses the in-memory path when the sink cannot patch headers (no data descriptors)', async () => {
    const options: ResignOptions = { identity: testPki().leaf, profiles, streamAbove: 0 };
    const patchable = await resign(app.bytes, options);
    const inner = new MemorySink();
    const appendOnly: DataSink = { get position() { return inner.position; }, write: (data) => inner.write(data), close: () => inner.close() };
    const result = await resignIpa(new BufferSource(app.bytes), appendOnly, { signingTime: SIGNING_TIME, workers: 0, ...options });
    assert.deepEqual(result, patchable.result);
    assert.ok(inner.toBuffer().equals(patchable.bytes));
  });
});

describe('aborting a re-sign', needsToolchain(), () => {
  it('fails promptly, streamed or in memory, wherever the abort lands', { timeout: 60_000 }, async () => {
    const app = generatedApp('streaming-abort', { watch: true });
    const pki = testPki();
    const profiles = [app.bundleId, app.extensionId, `${app.bundleId}.watchkitapp`].map((id) => parseProvisioningProfile(pki.mobileprovision({ bundleId: id })));
    for (const streamAbove of [0, Infinity]) {
      for (const after of [1, 5, 20, 40]) {
        const controller = new AbortController();
        const sink = new MemorySink();
        const write = sink.write.bind(sink);
        let writes = 0;
        sink.write = async (data) => {
          if (++writes === after) controller.abort(new Error(`stop after ${after} writes`));
          await write(data);
        };
        const run = resignIpa(new BufferSource(app.bytes), sink, { identity: pki.leaf, profiles, signingTime: SIGNING_TIME, workers: 0, streamAbove, signal: controller.signal });
        await assert.rejects(run, (error: unknown) => error instanceof Error && /stop after|abort/i.test(error.message), `streamAbove ${streamAbove}, abort after ${after} writes`);
      }
    }
  });
});

describe('streaming re-signing of third-party apps', needsSharedFixtures(), () => {
  it("fastlane's very-capable-app.ipa: the same archive either way", async () => {
    const input = readFileSync(sharedFixture('ios/fastlane/ipas/very-capable-app.ipa')!);
    const pki = testPki();
    await assertStreamingSame(input, { identity: pki.leaf, profiles: [parseProvisioningProfile(pki.mobileprovision({ bundleId: '*' }))] }, 'very-capable-app');
  });
});
