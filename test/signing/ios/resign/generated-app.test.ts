// An app generated with clang + ld64.lld (framework, loose dylib, extension with its own profile,
// symlinks, localized resources) re-signed end to end: verification by Signet, openssl and the
// independent Python seal check; raw copies of unchanged entries; symlinks and modes kept;
// deterministic output; overrides; and the refusals of issue item 3.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { parsePlist, plistBoolean, plistDict, plistString } from '../../../../src/signing/plist/index.ts';
import { parseProvisioningProfile, type ProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpa, type ResignOptions } from '../../../../src/signing/ios/resign/index.ts';
import { allProblems, verifyIpa } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { ZipReader, ZipWriter } from '../../../../src/signing/zip/index.ts';
import { testOutputDir } from '../../../support/fixtures.ts';
import { generatedApp, pythonSealCheck, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';
import { opensslVerifySlices } from '../codesign/oracles.ts';

const SIGNING_TIME = new Date('2026-03-01T12:00:00Z');
let app: GeneratedApp;
let appProfile: ProvisioningProfile;
let widgetProfile: ProvisioningProfile;

async function resign(input: Buffer, options: Partial<ResignOptions> = {}): Promise<Buffer> {
  const sink = new MemorySink();
  await resignIpa(new BufferSource(input), sink, { identity: testPki().leaf, profiles: [appProfile, widgetProfile], signingTime: SIGNING_TIME, workers: 0, ...options });
  return sink.toBuffer();
}

async function refusal(promise: Promise<unknown>, code: string): Promise<SigningError> {
  let caught: unknown;
  await promise.catch((error: unknown) => (caught = error));
  assert.ok(caught instanceof SigningError, `expected ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

describe('re-signing a generated app', needsToolchain(), () => {
  before(() => {
    const pki = testPki();
    app = generatedApp();
    appProfile = parseProvisioningProfile(pki.mobileprovision({ bundleId: app.bundleId }));
    widgetProfile = parseProvisioningProfile(pki.mobileprovision({ bundleId: app.extensionId }));
  });

  it('signs leaf-first with its own profile per bundle and verifies everywhere', async () => {
    const output = await resign(app.bytes);
    const file = path.join(testOutputDir('ios-app'), 'generated-signed.ipa');
    writeFileSync(file, output);
    const report = await verifyIpa(new BufferSource(output));
    assert.deepEqual(allProblems(report), []);
    assert.deepEqual(report.bundles.map((b) => [b.path.replace('Payload/Signet.app/', ''), b.kind]), [
      ['Frameworks/Kit.framework/', 'framework'],
      ['PlugIns/Widget.appex/', 'appex'],
      ['', 'app'],
    ]);
    const widget = report.bundles[1]!;
    assert.equal(widget.profile?.applicationIdentifier, `${testPki().teamId}.${app.extensionId}`);
    assert.equal((widget.entitlements as Record<string, unknown>)['application-identifier'], `${testPki().teamId}.${app.extensionId}`);
    assert.equal(report.bundles[0]!.profile, undefined, 'frameworks carry no profile');
    const zip = await ZipReader.open(new BufferSource(output));
    for (const name of app.machO) {
      const bytes = await zip.readEntry(zip.getEntry(name)!, 1 << 24);
      assert.deepEqual(opensslVerifySlices(bytes), [], name);
    }
    const seal = pythonSealCheck(file, 'generated');
    assert.deepEqual(seal.problems, []);
    assert.equal(seal.bundles, 3);
  });

  it('copies unchanged entries raw, keeps symlinks, modes and entries outside the app, drops __MACOSX', async () => {
    const withFork = await addEntries(app.bytes, [['__MACOSX/Payload/._Signet.app', Buffer.from('fork')]]);
    const output = await resign(withFork);
    const input = await ZipReader.open(new BufferSource(withFork));
    const signed = await ZipReader.open(new BufferSource(output));
    const rewritten = new Set([
      ...app.machO,
      'Payload/Signet.app/embedded.mobileprovision',
      'Payload/Signet.app/PlugIns/Widget.appex/embedded.mobileprovision',
      'Payload/Signet.app/_CodeSignature/CodeResources',
      'Payload/Signet.app/PlugIns/Widget.appex/_CodeSignature/CodeResources',
      'Payload/Signet.app/Frameworks/Kit.framework/_CodeSignature/CodeResources',
    ]);
    let raw = 0;
    for (const entry of input.entries) {
      const out = signed.getEntry(entry.name);
      if (entry.name.startsWith('__MACOSX/')) {
        assert.equal(out, undefined);
        continue;
      }
      assert.ok(out, entry.name);
      assert.equal(out.unixMode, entry.unixMode, `${entry.name} mode`);
      assert.equal(out.isSymlink, entry.isSymlink);
      if (rewritten.has(entry.name)) continue;
      // Byte-identical compressed data: the raw copy never re-inflates or recompresses.
      assert.ok((await input.source.read(entry.dataOffset, entry.compressedSize)).equals(await signed.source.read(out.dataOffset, out.compressedSize)), entry.name);
      assert.equal(out.crc32, entry.crc32);
      raw++;
    }
    assert.ok(raw >= 20);
    assert.ok(signed.getEntry('SwiftSupport/iphoneos/README') && signed.getEntry('iTunesMetadata.plist'));
    const link = signed.getEntry('Payload/Signet.app/data-link.bin')!;
    assert.equal((await signed.readEntry(link, 100)).toString(), 'assets/data.bin');
  });

  it('is deterministic for the same inputs and signing time', async () => {
    const a = await resign(app.bytes);
    const b = await resign(app.bytes, { workers: 0 });
    assert.ok(a.equals(b));
  });

  it('renames the app, re-prefixes the extension, sets name and version, keeping a binary Info.plist binary', async () => {
    const pki = testPki();
    const binaryInfo = await rewriteInfoAsBinary(app.bytes);
    const renamed = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.example.renamed' }));
    const renamedWidget = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.example.renamed.widget' }));
    const output = await resign(binaryInfo, { profiles: [renamed, renamedWidget], overrides: { bundleId: 'com.example.renamed', displayName: 'Renamed', version: '2.5.1' } });
    const report = await verifyIpa(new BufferSource(output));
    assert.deepEqual(allProblems(report), []);
    assert.deepEqual(report.bundles.map((b) => b.bundleId), ['com.signet.kit', 'com.example.renamed.widget', 'com.example.renamed']);
    assert.equal(report.app.name, 'Renamed');
    assert.equal(report.app.version, '2.5.1');
    const zip = await ZipReader.open(new BufferSource(output));
    const info = await zip.readEntry(zip.getEntry('Payload/Signet.app/Info.plist')!, 1 << 20);
    assert.equal(info.subarray(0, 8).toString('latin1'), 'bplist00');
    assert.equal(parsePlist(info).format, 'binary');
  });

  it('refuses with a clear code: bundle id not covered, expired profile, certificate not in profile, expired certificate', async () => {
    const pki = testPki();
    const other = parseProvisioningProfile(pki.mobileprovision({ bundleId: 'com.other.app' }));
    const error = await refusal(resign(app.bytes, { profiles: [other] }), 'bundle_id_mismatch');
    assert.match(error.message, /com\.signet\.generated/);
    // The app's profile alone does not cover the extension.
    await refusal(resign(app.bytes, { profiles: [appProfile] }), 'bundle_id_mismatch');
    const expired = parseProvisioningProfile(pki.mobileprovision({ bundleId: app.bundleId, createdAt: new Date('2020-01-01'), expiresAt: new Date('2021-01-01') }));
    await refusal(resign(app.bytes, { profiles: [expired, widgetProfile] }), 'profile_expired');
    const foreign = parseProvisioningProfile(pki.mobileprovision({ bundleId: app.bundleId, certificate: pki.ecLeaf.certificate }));
    await refusal(resign(app.bytes, { profiles: [foreign, widgetProfile] }), 'profile_certificate_mismatch');
    const expiredCertProfiles = [app.bundleId, app.extensionId].map((bundleId) => parseProvisioningProfile(pki.mobileprovision({ bundleId, certificate: pki.expiredLeaf.certificate })));
    await refusal(resign(app.bytes, { identity: pki.expiredLeaf, profiles: expiredCertProfiles }), 'certificate_expired');
    await refusal(resign(app.bytes, { overrides: { bundleId: 'bad id!' } }), 'override_invalid');
    const healthKit = plistDict([['com.apple.developer.healthkit', plistBoolean(true)]]);
    const denied = await refusal(resign(app.bytes, { entitlements: healthKit }), 'entitlements_not_granted');
    assert.match(denied.message, /com\.apple\.developer\.healthkit \(not_granted\)/);
  });

  it('--entitlements: requested entitlements the profile grants are signed in', async () => {
    const pki = testPki();
    const push = parseProvisioningProfile(pki.mobileprovision({ bundleId: app.bundleId, apsEnvironment: 'production', applicationGroups: ['group.com.signet'] }));
    const output = await resign(app.bytes, { profiles: [push, widgetProfile], entitlements: plistDict([['aps-environment', plistString('production')]]) });
    const report = await verifyIpa(new BufferSource(output));
    assert.deepEqual(allProblems(report), []);
    const main = report.bundles.find((b) => b.kind === 'app')!;
    const entitlements = main.entitlements as Record<string, unknown>;
    assert.equal(entitlements['aps-environment'], 'production');
    // Only what was asked for (plus the identity keys): the profile's app group is not added.
    assert.equal(entitlements['com.apple.security.application-groups'], undefined);
    assert.equal(entitlements['application-identifier'], `${pki.teamId}.${app.bundleId}`);
  });

  it('signs a watch app with its own profile and an XPC service nested in a framework, and renames them', async () => {
    const pki = testPki();
    const watchApp = generatedApp('generated-watch', { watch: true });
    const profiles = ['com.example.w', 'com.example.w.widget', 'com.example.w.watchkitapp'].map((bundleId) => parseProvisioningProfile(pki.mobileprovision({ bundleId })));
    const output = await resign(watchApp.bytes, { profiles, overrides: { bundleId: 'com.example.w' } });
    const report = await verifyIpa(new BufferSource(output));
    assert.deepEqual(allProblems(report), []);
    assert.deepEqual(report.bundles.map((b) => [b.path.replace('Payload/Signet.app/', ''), b.kind, b.bundleId, b.profile?.applicationIdentifier ?? null]), [
      ['Frameworks/Kit.framework/XPCServices/Helper.xpc/', 'xpc', 'com.signet.kit.helper', null],
      ['Frameworks/Kit.framework/', 'framework', 'com.signet.kit', null],
      ['PlugIns/Widget.appex/', 'appex', 'com.example.w.widget', `${pki.teamId}.com.example.w.widget`],
      ['Watch/SignetWatch.app/', 'app', 'com.example.w.watchkitapp', `${pki.teamId}.com.example.w.watchkitapp`],
      ['', 'app', 'com.example.w', `${pki.teamId}.com.example.w`],
    ]);
    const zip = await ZipReader.open(new BufferSource(output));
    const watchInfo = parsePlist(await zip.readEntry(zip.getEntry('Payload/Signet.app/Watch/SignetWatch.app/Info.plist')!, 1 << 20)).value;
    assert.ok(watchInfo.type === 'dict');
    assert.deepEqual(watchInfo.value.get('WKCompanionAppBundleIdentifier'), plistString('com.example.w'));
  });

  it('fails cleanly (no hang, a zip error naming the entry) when a resource is corrupt', async () => {
    const zip = await ZipReader.open(new BufferSource(app.bytes));
    const entry = zip.getEntry('Payload/Signet.app/assets/data.bin')!;
    const damaged = Buffer.from(app.bytes);
    damaged[entry.dataOffset + Math.floor(entry.compressedSize / 2)]! ^= 0xff;
    const error = await refusal(resign(damaged), 'zip_invalid');
    assert.match(error.message, /assets\/data\.bin/);
  });

  it('the verifier catches a modified resource, an unsealed file and a swapped executable', async () => {
    const output = await resign(app.bytes);
    const modified = await replaceEntry(output, 'Payload/Signet.app/assets/data.bin', Buffer.from('tampered'));
    assert.ok(allProblems(await verifyIpa(new BufferSource(modified))).some((p) => /assets\/data\.bin: modified/.test(p)));
    const extra = await addEntries(output, [['Payload/Signet.app/PlugIns/Widget.appex/injected.txt', Buffer.from('x')]]);
    const extraReport = await verifyIpa(new BufferSource(extra));
    // Unsealed in the extension's seal and in the app's (iOS seals nested files as resources).
    assert.deepEqual(allProblems(extraReport).filter((p) => /injected\.txt/.test(p)), [
      'Payload/Signet.app/PlugIns/Widget.appex/injected.txt: unsealed',
      'Payload/Signet.app/PlugIns/Widget.appex/injected.txt: unsealed',
    ]);
    const unsigned = await replaceEntry(output, 'Payload/Signet.app/Frameworks/libhelper.dylib', await (await ZipReader.open(new BufferSource(app.bytes))).readEntry((await ZipReader.open(new BufferSource(app.bytes))).getEntry('Payload/Signet.app/Frameworks/libhelper.dylib')!, 1 << 24));
    const report = await verifyIpa(new BufferSource(unsigned));
    assert.equal(report.verified, false);
    assert.ok(allProblems(report).some((p) => /libhelper\.dylib: .*unsigned/.test(p)));
  });
});

describe('a nested bundle whose Info.plist names a missing executable (issue #17)', needsToolchain(), () => {
  const KIT = 'Payload/Signet.app/Frameworks/Kit.framework/';
  before(() => {
    const pki = testPki();
    app ??= generatedApp();
    appProfile ??= parseProvisioningProfile(pki.mobileprovision({ bundleId: app.bundleId }));
    widgetProfile ??= parseProvisioningProfile(pki.mobileprovision({ bundleId: app.extensionId }));
  });

  it('a framework or extension without its executable is refused, naming the bundle and the file', async () => {
    const noKit = generatedApp('no-kit-binary', { omit: ['Frameworks/Kit.framework/Kit'] });
    const error = await refusal(resign(noKit.bytes), 'ipa_invalid');
    assert.equal(error.message, `${KIT}Info.plist names the executable "Kit": ${KIT}Kit, which is not in the bundle (codesign refuses to sign such a framework, and iOS cannot load it)`);
    assert.deepEqual(error.details, { path: `${KIT}Kit`, bundle: KIT });
    const noWidget = generatedApp('no-widget-binary', { omit: ['PlugIns/Widget.appex/Widget'] });
    assert.match((await refusal(resign(noWidget.bytes), 'ipa_invalid')).message, /PlugIns\/Widget\.appex\/Info\.plist names the executable "Widget".*appex/);
  });

  it('the verifier reports it: a signed app whose framework lost its executable does not verify', async () => {
    const output = await resign(app.bytes);
    const report = await verifyIpa(new BufferSource(await removeEntry(output, `${KIT}Kit`)));
    assert.equal(report.verified, false);
    assert.ok(allProblems(report).includes(`${KIT}Info.plist names the executable "Kit": ${KIT}Kit, which is not in the bundle (codesign refuses to sign such a framework, and iOS cannot load it)`), allProblems(report).join('\n'));
    assert.ok(!report.bundles.some((b) => b.path === KIT), 'not reported as a bundle');
  });

  it('a plain bundle naming a missing executable (a resource bundle) is sealed as resources and verifies', async () => {
    const plist = (entries: Record<string, string>): Buffer => Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict>${Object.entries(entries).map(([k, v]) => `<key>${k}</key><string>${v}</string>`).join('')}</dict></plist>\n`);
    const withBundle = await addEntries(app.bytes, [
      ['Payload/Signet.app/Assets.bundle/Info.plist', plist({ CFBundleIdentifier: 'com.vendor.assets', CFBundleExecutable: 'Assets', CFBundlePackageType: 'BNDL' })],
      ['Payload/Signet.app/Assets.bundle/logo.dat', Buffer.alloc(100, 3)],
    ]);
    const report = await verifyIpa(new BufferSource(await resign(withBundle)));
    assert.deepEqual(allProblems(report), []);
    assert.deepEqual(report.bundles.map((b) => b.path.replace('Payload/Signet.app/', '')), ['Frameworks/Kit.framework/', 'PlugIns/Widget.appex/', '']);
  });
});

async function removeEntry(ipa: Buffer, name: string): Promise<Buffer> {
  const zip = await ZipReader.open(new BufferSource(ipa));
  const sink = new MemorySink();
  const writer = new ZipWriter(sink);
  for (const entry of zip.entriesInFileOrder()) if (entry.name !== name) await writer.addRaw(entry, zip);
  await writer.finish();
  return sink.toBuffer();
}

/** A copy of `ipa` with entries appended (src ZipWriter: raw copies plus new entries). */
async function addEntries(ipa: Buffer, extra: Array<[string, Buffer]>): Promise<Buffer> {
  const zip = await ZipReader.open(new BufferSource(ipa));
  const sink = new MemorySink();
  const writer = new ZipWriter(sink);
  for (const entry of zip.entriesInFileOrder()) await writer.addRaw(entry, zip);
  for (const [name, data] of extra) await writer.addEntry(name, data, { unixMode: 0o100644 });
  await writer.finish();
  return sink.toBuffer();
}

async function replaceEntry(ipa: Buffer, name: string, data: Buffer): Promise<Buffer> {
  const zip = await ZipReader.open(new BufferSource(ipa));
  const sink = new MemorySink();
  const writer = new ZipWriter(sink);
  for (const entry of zip.entriesInFileOrder()) {
    if (entry.name === name) await writer.addEntry(name, data, { unixMode: entry.unixMode ?? 0o100644 });
    else await writer.addRaw(entry, zip);
  }
  await writer.finish();
  return sink.toBuffer();
}

async function rewriteInfoAsBinary(ipa: Buffer): Promise<Buffer> {
  const { writePlist } = await import('../../../../src/signing/plist/index.ts');
  const zip = await ZipReader.open(new BufferSource(ipa));
  const name = 'Payload/Signet.app/Info.plist';
  const xml = await zip.readEntry(zip.getEntry(name)!, 1 << 20);
  return replaceEntry(ipa, name, writePlist(parsePlist(xml).value, 'binary'));
}
