// Whole-input fuzzing of the engines (issue 12): mutated .apk, .ipa, .p12 and .mobileprovision
// files go through inspection, signing and verification as a task would take them. Every outcome
// is a result or a SigningError/AppError with a catalogue code — never another exception. (The
// Mach-O signer has its own, deeper harness: test/signing/ios/macho-fuzz.ts.)
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { it } from 'node:test';
import { ERROR_CATALOGUE, errorCodeOf } from '../../src/errors.ts';
import { signApk, verifyApk } from '../../src/signing/android/index.ts';
import { loadIdentity } from '../../src/signing/cms/index.ts';
import { MemorySink } from '../../src/signing/data-sink.ts';
import { BufferSource } from '../../src/signing/data-source.ts';
import { inspectPackage } from '../../src/signing/inspect/index.ts';
import { parseProvisioningProfile } from '../../src/signing/ios/profile/index.ts';
import { resignIpa } from '../../src/signing/ios/resign/index.ts';
import { verifyIpa } from '../../src/signing/ios/verify-ipa/index.ts';
import { tinyApk } from '../support/app-packages.ts';
import { sharedFixture } from '../support/fixtures.ts';
import { ipaFromApp } from '../support/ios-app.ts';
import { testPki } from '../support/pki.ts';
import { buildZip } from '../support/zip-builder.ts';

// SIGNET_FUZZ_CASES=N runs more cases; to reproduce case i: SIGNET_FUZZ_FROM=i SIGNET_FUZZ_LOG=1,
// and SIGNET_FUZZ_DUMP=/tmp/fz writes each input to /tmp/fz-<kind>-<i>.
const CASES = Number(process.env.SIGNET_FUZZ_CASES ?? 60);

/** xorshift32: deterministic, so a failing case reproduces from its index. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

/** One mutation of `input`: byte flips (biased to the start and the end, where zip and DER headers are), truncation, a zeroed or duplicated run. */
function mutate(input: Buffer, random: () => number): Buffer {
  const out = Buffer.from(input);
  const pick = () => {
    const r = random();
    const edge = Math.floor(random() * Math.min(512, out.length));
    return r < 0.35 ? edge : r < 0.7 ? out.length - 1 - edge : Math.floor(random() * out.length);
  };
  const kind = random();
  if (kind < 0.6) {
    for (let i = 0, n = 1 + Math.floor(random() * 8); i < n; i += 1) out[pick()] = Math.floor(random() * 256);
    return out;
  }
  if (kind < 0.75) return out.subarray(0, Math.floor(random() * out.length));
  const start = pick();
  const length = Math.min(out.length - start, 1 + Math.floor(random() * 64));
  if (kind < 0.9) {
    out.fill(random() < 0.5 ? 0 : 0xff, start, start + length);
    return out;
  }
  return Buffer.concat([out.subarray(0, start + length), out.subarray(start)]);
}

interface Tally {
  ok: number;
  refused: Record<string, number>;
  crashes: string[];
}

async function fuzz(name: string, seeds: Buffer[], run: (input: Buffer) => Promise<unknown>): Promise<Tally> {
  const tally: Tally = { ok: 0, refused: {}, crashes: [] };
  const random = rng(0x5eed ^ name.length * 7919);
  for (let i = 0; i < CASES; i += 1) {
    const input = mutate(seeds[i % seeds.length]!, random);
    if (i < Number(process.env.SIGNET_FUZZ_FROM ?? 0)) continue;
    if (process.env.SIGNET_FUZZ_DUMP) (await import('node:fs')).writeFileSync(`${process.env.SIGNET_FUZZ_DUMP}-${name}-${i}`, input);
    if (process.env.SIGNET_FUZZ_LOG) process.stderr.write(`${name} case ${i} (${input.length} bytes) ${performance.now().toFixed(0)}\n`);
    try {
      await run(input);
      tally.ok += 1;
    } catch (error) {
      const code = errorCodeOf(error);
      if (code !== null && code in ERROR_CATALOGUE) tally.refused[code] = (tally.refused[code] ?? 0) + 1;
      else tally.crashes.push(`${name} case ${i}: ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack?.split('\n').slice(1, 4).join('\n')}` : String(error)}`);
    }
  }
  return tally;
}

it('mutated APKs: inspected, signed and verified, or refused with a catalogue code', { timeout: 300_000 }, async () => {
  const pki = testPki();
  const identity = await loadIdentity(pki.p12(pki.androidRsa, { password: 'pw' }), { password: 'pw' });
  const seeds = [tinyApk(), tinyApk({ packageName: 'com.example.fuzz', versionName: '1.2.3' } as never)];
  // apksig's golden inputs (signed and unsigned) when the shared corpus is there.
  for (const name of ['golden-aligned-in.apk', 'golden-aligned-v1v2v3-out.apk']) {
    const golden = sharedFixture(`android/apksig/golden/${name}`);
    if (golden && existsSync(golden)) seeds.push(readFileSync(golden));
  }
  const tally = await fuzz('apk', seeds, async (input) => {
    await inspectPackage(new BufferSource(input), { iconBytes: false });
    const sink = new MemorySink();
    await signApk(new BufferSource(input), sink, { identity, v1SignerName: 'CERT' });
    await verifyApk(new BufferSource(sink.toBuffer()));
  });
  assert.deepEqual(tally.crashes, []);
  assert.ok(Object.keys(tally.refused).length > 0);
});

it('mutated IPAs: inspected, re-signed and verified, or refused with a catalogue code', { timeout: 300_000 }, async () => {
  const pki = testPki();
  const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*' }));
  const app = sharedFixture('ios/isign/Test.app');
  const plist = '<?xml version="1.0"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.fuzz</string><key>CFBundleExecutable</key><string>X</string></dict></plist>';
  const seeds = [buildZip([{ name: 'Payload/X.app/Info.plist', data: plist, method: 8 }, { name: 'Payload/X.app/X', data: Buffer.concat([Buffer.from('cffaedfe0c000001', 'hex'), Buffer.alloc(120)]), method: 8 }]).bytes];
  if (app && existsSync(app)) seeds.push(ipaFromApp(app, 'fuzz-seed', ['.git', 'README.md']).bytes);
  const tally = await fuzz('ipa', seeds, async (input) => {
    await inspectPackage(new BufferSource(input), { iconBytes: false });
    const sink = new MemorySink();
    await resignIpa(new BufferSource(input), sink, { identity: pki.leaf, profiles: [profile], workers: 0 });
    await verifyIpa(new BufferSource(sink.toBuffer()));
  });
  assert.deepEqual(tally.crashes, []);
});

it('mutated PKCS#12 files and provisioning profiles: opened, or refused with a catalogue code', { timeout: 300_000 }, async () => {
  const pki = testPki();
  const p12s = [pki.p12(pki.androidRsa, { password: 'pw' }), pki.p12(pki.androidEc, { password: 'pw', legacy: true }), pki.p12(pki.leaf, { password: 'pw', includeChain: true })];
  const keystores = await fuzz('p12', p12s, (input) => loadIdentity(input, { password: 'pw' }));
  assert.deepEqual(keystores.crashes, []);
  const profiles = await fuzz('profile', [pki.mobileprovision({ bundleId: '*' }), pki.mobileprovision({ bundleId: 'com.example.app' })], async (input) => parseProvisioningProfile(input));
  assert.deepEqual(profiles.crashes, []);
});
