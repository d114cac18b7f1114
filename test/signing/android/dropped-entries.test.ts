// Issue #17, APKs: an entry that a re-sign drops unread (old JAR signature files, directories)
// does not decide whether the APK can be signed - Signet tolerates what apksigner tolerates and
// refuses what it refuses, with apksigner 31 as the oracle: both sign each generated input to
// the same bytes, and `apksigner verify` accepts the output. Kept entries keep every check.
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { signApk, verifyApk, v1SignerNameFor, type ApkSchemes, type SignApkResult } from '../../../src/signing/android/index.ts';
import { MemorySink } from '../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError, type SigningErrorCode } from '../../../src/signing/errors.ts';
import { inspectPackage } from '../../../src/signing/inspect/index.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { apkManifest, tinyIpa } from '../../support/app-packages.ts';
import { apksigner, mapLimit, needsApksigner } from '../../support/android-signing.ts';
import { testOutputDir } from '../../support/fixtures.ts';
import { testPki } from '../../support/pki.ts';
import { buildZip, type BuildEntry, type BuiltZip } from '../../support/zip-builder.ts';

const out = testOutputDir('signing', 'android', 'dropped-entries');
const KEY = path.join(out, 'signet.pk8');
const CERT = path.join(out, 'signet.x509.pem');
const ALL: ApkSchemes = { v1: true, v2: true, v3: true };
// An old JAR signature block: its bytes do not matter, since a re-sign never reads them.
const OLD_BLOCK = Buffer.from('3082 0000 old PKCS#7 signature block'.repeat(8));

/** A small APK (minSdk 21, so both signers write v1 too) with `odd` entries around its content. */
function apk(odd: BuildEntry[], after: BuildEntry[] = []): BuiltZip {
  return buildZip([
    ...odd,
    { name: 'AndroidManifest.xml', data: apkManifest({ packageName: 'com.signet.edge', minSdk: 21 }), method: 8 },
    { name: 'classes.dex', data: Buffer.from('dex\n035\0'.repeat(40)), method: 8 },
    { name: 'res/raw/notes.txt', data: 'kept, stored', method: 0 },
    ...after,
  ]);
}

async function signet(input: Buffer, schemes: ApkSchemes = ALL): Promise<{ output: Buffer; result: SignApkResult }> {
  const sink = new MemorySink();
  const result = await signApk(new BufferSource(input), sink, { identity: testPki().androidRsa, v1SignerName: v1SignerNameFor(undefined, 'signet.pk8'), schemes });
  return { output: sink.toBuffer(), result };
}

async function refusal(promise: Promise<unknown>, code: SigningErrorCode, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof SigningError, `expected ${code}, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.match(error.message, pattern);
    return true;
  });
}

/** `apksigner sign` of `input` (written as `name`.apk): its output, or its error text. */
async function theirs(name: string, input: Buffer, extra: string[] = []): Promise<{ output: Buffer | null; error: string }> {
  const file = path.join(out, `${name}.apk`);
  writeFileSync(file, input);
  const signed = path.join(out, `${name}.apksigner.apk`);
  const run = await apksigner(['sign', '--key', KEY, '--cert', CERT, '--v4-signing-enabled', 'false', ...extra, '--in', file, '--out', signed]);
  return run.code === 0 ? { output: readFileSync(signed), error: '' } : { output: null, error: run.stdout + run.stderr };
}

async function apksignerVerifies(name: string, bytes: Buffer, extra: string[] = []): Promise<string | null> {
  const file = path.join(out, `${name}.signet.apk`);
  writeFileSync(file, bytes);
  const run = await apksigner(['verify', '--verbose', ...extra, file]);
  return run.code === 0 && run.stdout.startsWith('Verifies') ? null : run.stdout + run.stderr;
}

/** Sets a u16/u32 field of the central record of entry `index` (records are 46 + name bytes). */
function patchCentral(built: BuiltZip, index: number, offset: number, value: number, width: 2 | 4): void {
  let pos = built.cdOffset;
  for (let i = 0; i < index; i++) pos += 46 + built.bytes.readUInt16LE(pos + 28) + built.bytes.readUInt16LE(pos + 30) + built.bytes.readUInt16LE(pos + 32);
  if (width === 2) built.bytes.writeUInt16LE(value, pos + offset);
  else built.bytes.writeUInt32LE(value, pos + offset);
}

mkdirSync(out, { recursive: true });

describe('APKs whose dropped entries are odd', needsApksigner(), () => {
  before(() => {
    const identity = testPki().androidRsa;
    writeFileSync(KEY, createPrivateKey(identity.privateKeyPem).export({ type: 'pkcs8', format: 'der' }));
    writeFileSync(CERT, identity.certificatePem);
  });

  // Each input: what is odd, and the entry that carries it. Signet and apksigner both sign it.
  const tolerated: Array<{ name: string; what: string; build: () => BuiltZip; dropped: string }> = [
    { name: 'rsa-method-21', what: 'META-INF/CERT.RSA stored with compression method 21', dropped: 'META-INF/CERT.RSA',
      build: () => apk([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK, method: 21, rawData: Buffer.from('method 21 bytes, not deflate') }]) },
    { name: 'rsa-local-stored', what: 'META-INF/CERT.RSA: local header says stored, central directory deflated', dropped: 'META-INF/CERT.RSA',
      build: () => apk([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK, method: 8, localMethod: 0 }]) },
    { name: 'sf-local-deflated', what: 'META-INF/CERT.SF: local header says deflated, central directory stored', dropped: 'META-INF/CERT.SF',
      build: () => apk([{ name: 'META-INF/CERT.SF', data: 'Signature-Version: 1.0\r\n\r\n', method: 0, localMethod: 8 }]) },
    { name: 'manifest-local-stored', what: 'META-INF/MANIFEST.MF (read for its main section) with a local header that says stored', dropped: 'META-INF/MANIFEST.MF',
      build: () => apk([{ name: 'META-INF/MANIFEST.MF', data: 'Manifest-Version: 1.0\r\nBuilt-By: edge\r\n\r\n', method: 8, localMethod: 0 }]) },
    { name: 'dsa-encrypted', what: 'META-INF/CERT.DSA flagged as encrypted', dropped: 'META-INF/CERT.DSA',
      build: () => apk([{ name: 'META-INF/CERT.DSA', data: OLD_BLOCK, flags: 0x0801 }]) },
    { name: 'ec-descriptor', what: 'META-INF/CERT.EC whose data descriptor disagrees with the central directory', dropped: 'META-INF/CERT.EC',
      build: () => {
        const built = apk([{ name: 'META-INF/CERT.EC', data: OLD_BLOCK, dataDescriptor: 'signed' }]);
        built.bytes.writeUInt32LE(0xdeadbeef, built.localHeaderOffsets[1]! - 12);
        return built;
      } },
    { name: 'sig-stored-sizes', what: 'META-INF/SIG-OLD stored with two different sizes (the rest is copied as a gap, as apksig does)', dropped: 'META-INF/SIG-OLD',
      build: () => apk([{ name: 'META-INF/SIG-OLD', data: 'abcd', method: 0, rawData: Buffer.from('abcdefgh') }]) },
    { name: 'unsafe-directory', what: 'directory entries named "../outside/" and "META-INF/"', dropped: '../outside/',
      build: () => apk([{ name: 'META-INF/', data: '', method: 0 }, { name: '../outside/', data: '', method: 0 }]) },
    { name: 'directory-clash', what: 'a directory "lib/" beside a kept file "lib"', dropped: 'lib/',
      build: () => apk([{ name: 'lib/', data: '', method: 0 }, { name: 'lib', data: 'a file', method: 8 }]) },
    { name: 'rsa-declared-bomb', what: 'META-INF/CERT.RSA declaring 2 GiB of content', dropped: 'META-INF/CERT.RSA',
      build: () => {
        const built = apk([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK }]);
        built.bytes.writeUInt32LE(0x7fffffff, built.localHeaderOffsets[0]! + 22);
        patchCentral(built, 0, 24, 0x7fffffff, 4);
        return built;
      } },
  ];

  it('signs every input exactly as apksigner does, and apksigner verifies the output', async () => {
    const failures = await mapLimit(tolerated, 2, async (item) => {
      const input = item.build().bytes;
      const { output, result } = await signet(input);
      assert.ok(result.dropped.includes(item.dropped), `${item.what}: ${JSON.stringify(result.dropped)}`);
      const report = await verifyApk(new BufferSource(output), { written: result.written });
      assert.ok(report.verified, `${item.what}: ${JSON.stringify(report.errors)}`);
      const reference = await theirs(item.name, input);
      if (reference.output === null) return `${item.what}: apksigner refused: ${reference.error}`;
      if (!output.equals(reference.output)) return `${item.what}: output differs from apksigner's`;
      const verdict = await apksignerVerifies(item.name, output);
      return verdict === null ? null : `${item.what}: apksigner verify: ${verdict}`;
    });
    assert.deepEqual(failures.filter((f) => f !== null), []);
  });

  it('the same defects in a kept entry are still refused', async () => {
    const method21 = apk([{ name: 'assets/blob.bin', data: OLD_BLOCK, method: 21, rawData: Buffer.from('method 21 bytes') }]).bytes;
    await refusal(signet(method21), 'zip_unsupported', /"assets\/blob\.bin" uses compression method 21/);
    // apksigner refuses it too: it inflates every non-stored entry it keeps, to digest it for v1.
    assert.match((await theirs('kept-method-21', method21)).error, /Malformed ZIP entry: assets\/blob\.bin/);
    const mismatch = apk([{ name: 'assets/blob.bin', data: OLD_BLOCK, method: 8, localMethod: 0 }]).bytes;
    // Stricter than apksigner (which copies it): two unzip tools would see two different files.
    await refusal(signet(mismatch), 'zip_invalid', /local header of "assets\/blob\.bin" .* has compression method 0, the central directory says 8/);
    await refusal(signet(apk([{ name: 'assets/blob.bin', data: OLD_BLOCK, flags: 0x0801 }]).bytes), 'zip_unsupported', /"assets\/blob\.bin" is encrypted/);
    await refusal(signet(apk([{ name: 'assets/../../blob.bin', data: OLD_BLOCK }]).bytes), 'zip_unsafe_entry', /"\.\." segment/);
  });

  it('refuses, as apksigner does, a dropped entry whose record cannot be stepped over', async () => {
    const noSignature = apk([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK }]);
    noSignature.bytes.writeUInt32LE(0x11111111, 0);
    const otherName = apk([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK, localName: 'META-INF/CERT.RSB' }]);
    const pastCentralDirectory = apk([], [{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK, method: 0 }]);
    pastCentralDirectory.bytes.writeUInt32LE(5000, pastCentralDirectory.localHeaderOffsets[3]! + 18);
    pastCentralDirectory.bytes.writeUInt32LE(5000, pastCentralDirectory.localHeaderOffsets[3]! + 22);
    patchCentral(pastCentralDirectory, 3, 20, 5000, 4);
    patchCentral(pastCentralDirectory, 3, 24, 5000, 4);
    const truncatedHeader = apk([], [{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK }]);
    patchCentral(truncatedHeader, 3, 42, truncatedHeader.cdOffset - 20, 4);
    const duplicate = apk([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK }, { name: 'META-INF/CERT.RSA', data: OLD_BLOCK }]);
    const cases: Array<[string, BuiltZip, SigningErrorCode, RegExp, RegExp]> = [
      ['no-lfh-signature', noSignature, 'zip_invalid', /local header of "META-INF\/CERT\.RSA" at 0 has no signature/, /Malformed ZIP entry: META-INF\/CERT\.RSA/],
      ['lfh-other-name', otherName, 'zip_invalid', /names a different entry than the central directory \("META-INF\/CERT\.RSA"\)/, /Malformed ZIP entry: META-INF\/CERT\.RSA/],
      ['data-past-cd', pastCentralDirectory, 'zip_overlapping_entries', /data of "META-INF\/CERT\.RSA" runs into the central directory/, /Malformed ZIP entry: META-INF\/CERT\.RSA/],
      ['truncated-lfh', truncatedHeader, 'zip_overlapping_entries', /local header of "META-INF\/CERT\.RSA" at \d+ is not before the central directory/, /Malformed ZIP entry: META-INF\/CERT\.RSA/],
      ['duplicate', duplicate, 'zip_duplicate_entry', /"META-INF\/CERT\.RSA" and "META-INF\/CERT\.RSA"/, /Multiple ZIP entries with the same name: META-INF\/CERT\.RSA/],
    ];
    for (const [name, built, code, ours, apksig] of cases) {
      await refusal(signet(built.bytes), code, ours);
      assert.match((await theirs(name, built.bytes)).error, apksig, name);
    }
  });

  it('reads META-INF/MANIFEST.MF when v1 is on (refusing an unreadable one, as apksigner does), not otherwise', async () => {
    const input = apk([{ name: 'META-INF/MANIFEST.MF', data: 'Manifest-Version: 1.0\r\n\r\n', method: 21, rawData: Buffer.from('method 21 bytes') }]).bytes;
    await refusal(signet(input), 'zip_unsupported', /"META-INF\/MANIFEST\.MF" uses compression method 21/);
    assert.match((await theirs('manifest-method-21', input)).error, /Malformed ZIP entry: META-INF\/MANIFEST\.MF/);
    const v2v3 = { v1: false, v2: true, v3: true };
    const { output } = await signet(input, v2v3);
    const reference = await theirs('manifest-method-21-v2v3', input, ['--v1-signing-enabled', 'false']);
    assert.ok(reference.output !== null, reference.error);
    assert.ok(output.equals(reference.output));
    // Without v1 the signature holds from API 24 on.
    assert.equal(await apksignerVerifies('manifest-method-21-v2v3', output, ['--min-sdk-version', '24']), null);
  });

  it('refuses an unreadable source stamp entry, whose data apksigner reads ("Bad source stamp entry")', async () => {
    const input = apk([{ name: 'stamp-cert-sha256', data: Buffer.alloc(32, 1), method: 21, rawData: Buffer.from('method 21') }]).bytes;
    await refusal(signet(input), 'zip_unsupported', /"stamp-cert-sha256" uses compression method 21/);
    assert.match((await theirs('stamp-method-21', input)).error, /Bad source stamp entry/);
  });

  it('refuses a dropped entry that overlaps a kept one (apksigner signs it; Signet refuses overlaps everywhere)', async () => {
    const built = apk([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK, method: 0 }]);
    // CERT.RSA now claims the first 40 bytes of AndroidManifest.xml's record.
    const size = OLD_BLOCK.length + 40;
    for (const field of [18, 22]) built.bytes.writeUInt32LE(size, built.localHeaderOffsets[0]! + field);
    patchCentral(built, 0, 20, size, 4);
    patchCentral(built, 0, 24, size, 4);
    await refusal(signet(built.bytes), 'zip_overlapping_entries', /"AndroidManifest\.xml" at \d+ overlaps "META-INF\/CERT\.RSA"/);
    assert.ok((await theirs('overlap', built.bytes)).output !== null);
  });

  it('upload inspection accepts such an APK; an .ipa gets no such leniency', async () => {
    const info = await inspectPackage(new BufferSource(tolerated[0]!.build().bytes));
    assert.equal(info.platform, 'android');
    assert.equal(info.bundleId, 'com.signet.edge');
    const ipa = await ZipReader.open(new BufferSource(tinyIpa()));
    const entries: BuildEntry[] = [];
    for (const entry of ipa.entries) entries.push({ name: entry.name, data: await ipa.readEntry(entry) });
    const odd = buildZip([{ name: 'META-INF/CERT.RSA', data: OLD_BLOCK, method: 21, rawData: Buffer.from('method 21') }, ...entries]).bytes;
    await assert.rejects(inspectPackage(new BufferSource(odd)), (error: unknown) => error instanceof SigningError && error.code === 'invalid_package' && /compression method 21/.test(error.message));
  });
});

describe('verifying an APK whose JAR signature files are odd (as apksigner verify does)', needsApksigner(), () => {
  /** A v1-only signed APK and the offsets of its signature block's local header and CD record. */
  async function v1Signed(): Promise<{ bytes: Buffer; block: string; localHeader: number; central: number }> {
    const { output } = await signet(apk([]).bytes, { v1: true, v2: false, v3: false });
    const zip = await ZipReader.open(new BufferSource(output));
    const block = zip.entries.find((e) => e.name.endsWith('.RSA'))!;
    let central = zip.geometry.centralDirectoryOffset;
    for (const entry of zip.entries) {
      if (entry === block) break;
      central += entry.centralRecord.length;
    }
    return { bytes: output, block: block.name, localHeader: block.localHeaderOffset, central };
  }

  it('reads the signature block by its central directory record when its local header disagrees', async () => {
    const signed = await v1Signed();
    signed.bytes.writeUInt16LE(0, signed.localHeader + 8);
    const report = await verifyApk(new BufferSource(signed.bytes));
    assert.ok(report.verified, JSON.stringify(report.errors));
    assert.equal(await apksignerVerifies('v1-block-local-stored', signed.bytes), null);
  });

  it('refuses a signature block it cannot read; a kept entry that disagrees is refused too', async () => {
    const signed = await v1Signed();
    signed.bytes.writeUInt16LE(21, signed.localHeader + 8);
    signed.bytes.writeUInt16LE(21, signed.central + 10);
    // apksigner inflates any method but "stored", and so verifies this; no zip reader on a device would.
    await refusal(verifyApk(new BufferSource(signed.bytes)), 'zip_unsupported', new RegExp(`"${signed.block.replace('.', '\\.')}" uses compression method 21`));
    const kept = await v1Signed();
    const zip = await ZipReader.open(new BufferSource(kept.bytes));
    kept.bytes.writeUInt16LE(0, zip.getEntry('classes.dex')!.localHeaderOffset + 8);
    await refusal(verifyApk(new BufferSource(kept.bytes)), 'zip_invalid', /local header of "classes\.dex" .* compression method 0/);
  });
});
