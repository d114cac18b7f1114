// Mutation fuzzing of the AXML and resources.arsc parsers: byte flips, truncations and extreme
// size/offset words in real manifests and tables. Every case must end in a result or a
// SigningError `manifest_invalid` — never another exception, a hang or a crash. Seeded, so a
// failure is reproducible from its case number.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readApkMetadata, type ResourceFiles } from '../../../../src/signing/android/axml/index.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { ZipReader } from '../../../../src/signing/zip/index.ts';
import { aapt2SkipReason, aaptSkipReason, buildAaptApk, solidPng } from '../../../support/aapt-apk.ts';
import { encodeArsc, encodeAxml } from '../../../support/axml-encoder.ts';
import { sharedFixture } from '../../../support/fixtures.ts';

interface Seed {
  name: string;
  manifest: Buffer;
  resources: Buffer | null;
  files: ResourceFiles;
}

/** xorshift32: small, deterministic, good enough to pick offsets. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x;
  };
}

function mutate(input: Buffer, next: () => number): Buffer {
  const out = Buffer.from(input);
  switch (next() % 4) {
    case 0: // flip a few bytes
      for (let i = 0, n = 1 + (next() % 8); i < n; i++) out[next() % out.length] = next() & 0xff;
      return out;
    case 1: // truncate
      return out.subarray(0, next() % out.length);
    case 2: { // an extreme value in a 32-bit word (sizes, counts, offsets)
      const at = (next() % Math.floor(out.length / 4)) * 4;
      const values = [0, 0xffffffff, 0x7fffffff, 0x80000000, out.length, out.length + 4, 8, 0xffff];
      out.writeUInt32LE(values[next() % values.length]!, at);
      return out;
    }
    default: { // an extreme value in a 16-bit word (header sizes, attribute counts, lengths)
      const at = (next() % Math.floor(out.length / 2)) * 2;
      const values = [0, 0xffff, 0x8000, 0x7fff, 1, 8];
      out.writeUInt16LE(values[next() % values.length]!, at);
      return out;
    }
  }
}

async function seedsFromApk(name: string, apk: Buffer): Promise<Seed> {
  const zip = await ZipReader.open(new BufferSource(apk));
  const read = (entry: string): Promise<Buffer> => zip.readEntry(zip.getEntry(entry)!, 1 << 24);
  return {
    name,
    manifest: await read('AndroidManifest.xml'),
    resources: zip.getEntry('resources.arsc') ? await read('resources.arsc') : null,
    files: { size: (p) => zip.getEntry(p)?.uncompressedSize ?? null, read },
  };
}

async function seeds(): Promise<Seed[]> {
  const out: Seed[] = [];
  const fixture = sharedFixture('android/apksig/golden/original.apk');
  if (fixture !== null) out.push(await seedsFromApk('original.apk', readFileSync(fixture)));
  const NS = 'xmlns:android="http://schemas.android.com/apk/res/android"';
  const spec = {
    manifest: `<manifest ${NS} package="com.example.fuzz" android:versionCode="3" android:versionName="@string/vn"><uses-sdk android:minSdkVersion="26" android:targetSdkVersion="34"/><application android:label="@string/app" android:icon="@mipmap/ic"/></manifest>`,
    res: {
      'values/strings.xml': '<resources><string name="app">Fuzz</string><string name="vn">1.0</string></resources>',
      'values-fr/strings.xml': '<resources><string name="app">Flou</string></resources>',
      'values/colors.xml': '<resources><color name="bg">#ff0000</color></resources>',
      'mipmap-anydpi-v26/ic.xml': `<adaptive-icon ${NS}><background android:drawable="@color/bg"/><foreground android:drawable="@mipmap/fg"/></adaptive-icon>`,
      'mipmap-xhdpi/fg.png': solidPng(8, 8),
    },
  };
  if (aaptSkipReason() === false) {
    out.push(await seedsFromApk('aapt, UTF-16 table', readFileSync(buildAaptApk('fuzz-seed', { ...spec, utf16: true }))));
  }
  if (aapt2SkipReason() === false) {
    out.push(await seedsFromApk('aapt2, sparse table', readFileSync(buildAaptApk('fuzz-seed-aapt2', { ...spec, aapt2: true }))));
  }
  // Encoder-made seed with the aapt2-only layouts (sparse, compact), always available.
  const table = encodeArsc([{ id: 0x7f, name: 'p', typeNames: ['string', 'mipmap'], types: [
    { id: 1, layout: 'sparse', compact: true, entries: [{ key: 'app', type: 0x03, string: 'Sparse' }] },
    { id: 2, layout: 'offset16', config: { density: 480 }, entries: [{ key: 'ic', type: 0x03, string: 'res/ic.png' }] },
  ] }]);
  const NSURI = 'http://schemas.android.com/apk/res/android';
  const manifest = encodeAxml({ name: 'manifest', attrs: [{ name: 'package', type: 0x03, string: 'p' }], children: [
    { name: 'uses-sdk', attrs: [{ ns: NSURI, name: 'minSdkVersion', resId: 0x0101020c, type: 0x10, data: 24 }] },
    { name: 'application', attrs: [
      { ns: NSURI, name: 'label', resId: 0x01010001, type: 0x01, data: 0x7f010000 },
      { ns: NSURI, name: 'icon', resId: 0x01010002, type: 0x01, data: 0x7f020000 },
    ] },
  ] }, { utf8: true });
  const png = solidPng(4, 4);
  out.push({ name: 'encoder', manifest, resources: table, files: { size: (p) => (p === 'res/ic.png' ? png.length : null), read: async () => png } });
  return out;
}

describe('AXML / resources.arsc fuzzing', () => {
  it('survives 800 mutated manifests and tables with a result or manifest_invalid', { timeout: 600_000 }, async () => {
    const all = await seeds();
    assert.ok(all.length >= 1);
    for (const seed of all) await readApkMetadata(seed); // the unmutated seeds parse
    const next = rng(Number(process.env.AXML_FUZZ_SEED ?? 0x5eed));
    let refused = 0;
    // AXML_FUZZ_CASES / AXML_FUZZ_SEED run longer or different campaigns locally.
    const cases = Number(process.env.AXML_FUZZ_CASES ?? 800);
    for (let i = 0; i < cases; i++) {
      const seed = all[i % all.length]!;
      const mutateTable = seed.resources !== null && next() % 2 === 0;
      const input = {
        manifest: mutateTable ? seed.manifest : mutate(seed.manifest, next),
        resources: mutateTable ? mutate(seed.resources!, next) : seed.resources,
        files: seed.files,
      };
      try {
        await readApkMetadata(input);
      } catch (error) {
        if (!(error instanceof SigningError) || error.code !== 'manifest_invalid') {
          assert.fail(`case ${i} (${seed.name}, ${mutateTable ? 'resources.arsc' : 'manifest'}): ${(error as Error).stack}`);
        }
        refused++;
      }
    }
    // Most mutations must be caught; a fuzzer that never trips anything is not fuzzing.
    console.log(`fuzz: ${refused} of ${cases} mutations refused with manifest_invalid, the rest parsed`);
    assert.ok(refused > cases / 10, `only ${refused} of ${cases} mutations were refused`);
  });
});
