// inspectPackage on iOS archives: the fastlane/isign fixtures (accepted or refused with
// distinct reasons) and .ipa files built in the test for icons, nested apps and broken plists.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BufferSource, FileSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { inspectPackage, packageInfoJson, type PackageInfo } from '../../../src/signing/inspect/index.ts';
import { plistFromJs, writeBinaryPlist, writeXmlPlist } from '../../../src/signing/plist/index.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { encodeCgbi } from '../../support/cgbi.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { buildZip, type BuildEntry } from '../../support/zip-builder.ts';

async function inspectBytes(bytes: Buffer, options?: { iconBytes?: boolean }): Promise<PackageInfo> {
  return inspectPackage(new BufferSource(bytes), options);
}

async function inspectFile(path: string): Promise<PackageInfo> {
  const source = await FileSource.open(path);
  try {
    return await inspectPackage(source);
  } finally {
    await source.close();
  }
}

function refusedWith(reason: string, message?: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof SigningError, String(error));
    assert.equal(error.code, 'invalid_package');
    assert.equal(error.details?.reason, reason, error.message);
    if (message !== undefined) assert.match(error.message, message);
    return true;
  };
}

function ipa(files: Record<string, Buffer | string>): Buffer {
  return buildZip(Object.entries(files).map(([name, data]): BuildEntry => ({ name, data }))).bytes;
}

const infoPlist = (extra: Record<string, unknown> = {}, binary = false): Buffer => {
  const value = plistFromJs({ CFBundleIdentifier: 'com.example.app', CFBundleName: 'Example', CFBundleShortVersionString: '2.0', CFBundleVersion: '200', MinimumOSVersion: '15.0', CFBundleExecutable: 'Example', ...extra });
  return binary ? writeBinaryPlist(value) : writeXmlPlist(value);
};
const rgba = (w: number, h: number): Buffer => Buffer.alloc(w * h * 4, 0x7f);

describe('inspectPackage: iOS fixtures', { skip: needsSharedFixtures().skip }, () => {
  it('reads very-capable-app.ipa (binary Info.plist)', async () => {
    const info = await inspectFile(sharedFixture('ios/fastlane/ipas/very-capable-app.ipa')!);
    assert.equal(info.platform, 'ios');
    assert.ok(info.platform === 'ios');
    assert.deepEqual(
      [info.appPath, info.bundleId, info.name, info.version, info.build, info.minOs, info.executable, info.deviceFamily, info.supportedPlatforms],
      ['Payload/very-capable-app.app/', 'org.fastlane.very-capable-app', 'very-capable-app', '1.0', '1', '11.2', 'very-capable-app', [1, 2], ['iPhoneOS']],
    );
    assert.equal(info.icon, null);
    assert.match(info.iconIssue ?? '', /names no icon files/);
  });

  it('refuses the negative fixtures, each with its own reason', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['ios/fastlane/ipas/not-an-ipa.ipa', 'not_a_zip', /not a readable zip/],
      ['ios/fastlane/ipas/no-app-bundle.ipa', 'no_app_bundle', /Payload\/ holds no \.app/],
      ['ios/isign/NotAnApp.ipa', 'no_app', /neither an iOS app/],
      // These three zip a folder that contains Payload/; installd and App Store Connect need
      // Payload/ at the top, so Signet says so instead of guessing.
      ['ios/fastlane/ipas/iOSAppOnly.ipa', 'payload_not_at_root', /inside the folder "iOSAppOnly\/"/],
      ['ios/fastlane/ipas/ContainsWatchApp.ipa', 'payload_not_at_root', /"ContainsWatchApp\/"/],
      ['ios/fastlane/ipas/IncorrectlySigned.ipa', 'payload_not_at_root', /"IncorrectlySigned\/"/],
    ];
    for (const [file, reason, message] of cases) await assert.rejects(inspectFile(sharedFixture(file)!), refusedWith(reason, message), file);
  });

  it('reads ContainsWatchApp re-rooted at Payload/: the nested watch app is not a second app', async () => {
    const original = await ZipReader.open(new BufferSource(readFileSync(sharedFixture('ios/fastlane/ipas/ContainsWatchApp.ipa')!)));
    const files: Record<string, Buffer> = {};
    for (const entry of original.entries) {
      if (entry.isDirectory || !entry.name.startsWith('ContainsWatchApp/')) continue;
      files[entry.name.slice('ContainsWatchApp/'.length)] = await original.readEntry(entry, 1 << 20);
    }
    const info = await inspectBytes(ipa(files));
    assert.ok(info.platform === 'ios');
    assert.deepEqual([info.appPath, info.bundleId, info.name, info.version, info.build, info.minOs], ['Payload/Sample.app/', 'com.example.Sample', 'Sample', '1.2.0', '1', '8.0']);
    assert.equal(info.icon, null);
    assert.match(info.iconIssue ?? '', /names icon files \(appicon29x29, .*none is a PNG/);
  });
});

describe('inspectPackage: built .ipa files', () => {
  for (const binary of [false, true]) {
    it(`picks the largest listed icon and flags CgBI (${binary ? 'binary' : 'XML'} Info.plist)`, async () => {
      const info = await inspectBytes(ipa({
        'Payload/Example.app/Info.plist': infoPlist({
          CFBundleDisplayName: 'Example Display',
          CFBundleIcons: { CFBundlePrimaryIcon: { CFBundleIconFiles: ['AppIcon60x60'], CFBundleIconName: 'AppIcon' } },
          'CFBundleIcons~ipad': { CFBundlePrimaryIcon: { CFBundleIconFiles: ['AppIcon76x76'] } },
        }, binary),
        'Payload/Example.app/Example': 'MACHO',
        'Payload/Example.app/AppIcon60x60@2x.png': encodeCgbi(120, 120, rgba(120, 120)),
        'Payload/Example.app/AppIcon60x60@3x.png': encodeCgbi(180, 180, rgba(180, 180)),
        'Payload/Example.app/AppIcon76x76@2x~ipad.png': encodeCgbi(152, 152, rgba(152, 152)),
        'Payload/Example.app/Default-Huge.png': encodeCgbi(640, 640, rgba(640, 640)),
        'Payload/Example.app/Sub/AppIcon-big.png': encodeCgbi(1024, 1024, rgba(1024, 1024)),
      }));
      assert.ok(info.platform === 'ios');
      assert.equal(info.name, 'Example Display');
      assert.deepEqual([info.bundleId, info.version, info.build, info.minOs], ['com.example.app', '2.0', '200', '15.0']);
      assert.equal(info.icon?.path, 'Payload/Example.app/AppIcon60x60@3x.png');
      assert.deepEqual([info.icon.cgbi, info.icon.width, info.icon.height, info.icon.format, info.icon.source], [true, 180, 180, 'png', 'bundle']);
      assert.deepEqual(info.icon.bytes, encodeCgbi(180, 180, rgba(180, 180)));
      // The JSON form (API, `signet inspect --json`) describes the icon instead of embedding it.
      const json = packageInfoJson(info);
      assert.deepEqual([json.platform, json.bundle_id, json.min_os, json.build], ['ios', 'com.example.app', '15.0', '200']);
      assert.deepEqual(json.icon, {
        path: 'Payload/Example.app/AppIcon60x60@3x.png', format: 'png', cgbi: true, width: 180, height: 180, density: null, source: 'bundle',
        size: info.icon.bytes!.length, sha256: createHash('sha256').update(info.icon.bytes!).digest('hex'),
      });
    });
  }

  it('finds AppIcon*.png without Info.plist icon keys and can skip the bytes', async () => {
    const info = await inspectBytes(ipa({
      'Payload/Example.app/Info.plist': infoPlist(),
      'Payload/Example.app/AppIcon83.5x83.5@2x~ipad.png': encodeCgbi(167, 167, rgba(167, 167)),
    }), { iconBytes: false });
    assert.equal(info.icon?.path, 'Payload/Example.app/AppIcon83.5x83.5@2x~ipad.png');
    assert.equal(info.icon.bytes, null);
  });

  it('refuses broken or ambiguous archives with precise reasons', async () => {
    const cases: Array<[Record<string, Buffer | string>, string, RegExp]> = [
      [{ 'Payload/A.app/Info.plist': infoPlist(), 'Payload/B.app/Info.plist': infoPlist() }, 'several_apps', /2 apps \(A\.app, B\.app\)/],
      [{ 'Payload/A.app/A': 'MACHO' }, 'no_info_plist', /Payload\/A\.app\/ has no Info\.plist/],
      [{ 'Payload/A.app/Info.plist': 'not a plist' }, 'info_plist_unreadable', /Info\.plist cannot be read/],
      [{ 'Payload/A.app/Info.plist': writeXmlPlist(plistFromJs(['array'])) }, 'info_plist_unreadable', /not a dictionary/],
      [{ 'Payload/A.app/Info.plist': infoPlist({ CFBundleIdentifier: '' }) }, 'info_plist_incomplete', /no CFBundleIdentifier/],
      [{ 'Payload/A.app/Info.plist': infoPlist(), 'AndroidManifest.xml': 'x' }, 'ambiguous_platform', /both an iOS app/],
      [{ 'readme.txt': 'hello' }, 'no_app', /neither/],
      [{ 'BundleConfig.pb': 'x', 'base/manifest/AndroidManifest.xml': 'x' }, 'android_app_bundle', /App Bundle/],
      [{ 'AndroidManifest.xml': 'not axml' }, 'manifest_unreadable', /AndroidManifest\.xml or resources\.arsc cannot be parsed/],
    ];
    for (const [files, reason, message] of cases) await assert.rejects(inspectBytes(ipa(files)), refusedWith(reason, message), reason);
  });

  it('turns zip damage found while reading an entry into invalid_package', async () => {
    // Stored bytes that differ from the CRC-32 both headers declare: found only when read.
    const plist = infoPlist();
    const bytes = buildZip([{ name: 'Payload/A.app/Info.plist', data: plist, method: 0, rawData: Buffer.alloc(plist.length, 0x20) }]).bytes;
    await assert.rejects(inspectBytes(bytes), (error) => refusedWith('zip_rejected', /CRC/)(error) && typeof (error as SigningError).details?.cause === 'string');
  });
});
