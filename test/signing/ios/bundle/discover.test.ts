// The bundle model: nested bundles found by content (Info.plist naming an executable), whatever
// their folder is called; leaf-first order; entries outside the app kept, __MACOSX dropped; and
// the fastlane/isign negative fixtures refused alike at upload (inspectPackage) and at signing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { inspectPackage } from '../../../../src/signing/inspect/index.ts';
import { discoverLayout, openIpa } from '../../../../src/signing/ios/bundle/index.ts';
import { parseProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpa } from '../../../../src/signing/ios/resign/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';
import { buildZip } from '../../../support/zip-builder.ts';
import { testPki } from '../../../support/pki.ts';

const plist = (entries: Record<string, string>, extra = ''): string =>
  `<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>${Object.entries(entries).map(([k, v]) => `<key>${k}</key><string>${v}</string>`).join('')}${extra}</dict></plist>`;
const MACHO = Buffer.concat([Buffer.from([0xcf, 0xfa, 0xed, 0xfe]), Buffer.alloc(60)]);

function layoutZip(): Buffer {
  return buildZip([
    { name: 'Payload/', data: '' },
    { name: 'Payload/A.app/Info.plist', data: plist({ CFBundleIdentifier: 'com.a', CFBundleExecutable: 'A', CFBundlePackageType: 'APPL' }), method: 8 },
    { name: 'Payload/A.app/A', data: MACHO },
    // A framework in an unusual folder, found by its Info.plist + executable.
    { name: 'Payload/A.app/Vendor/Odd.framework/Info.plist', data: plist({ CFBundleIdentifier: 'com.odd', CFBundleExecutable: 'Odd', CFBundlePackageType: 'FMWK' }) },
    { name: 'Payload/A.app/Vendor/Odd.framework/Odd', data: MACHO },
    { name: 'Payload/A.app/PlugIns/E.appex/Info.plist', data: plist({ CFBundleIdentifier: 'com.a.e', CFBundleExecutable: 'E' }, '<key>NSExtension</key><dict/>') },
    { name: 'Payload/A.app/PlugIns/E.appex/E', data: MACHO },
    { name: 'Payload/A.app/PlugIns/E.appex/Frameworks/In.framework/Info.plist', data: plist({ CFBundleIdentifier: 'com.in', CFBundleExecutable: 'In' }) },
    { name: 'Payload/A.app/PlugIns/E.appex/Frameworks/In.framework/In', data: MACHO },
    { name: 'Payload/A.app/Watch/W.app/Info.plist', data: plist({ CFBundleIdentifier: 'com.a.watch', CFBundleExecutable: 'W', CFBundlePackageType: 'APPL' }) },
    { name: 'Payload/A.app/Watch/W.app/W', data: MACHO },
    // Not bundles: a storyboard (no executable), a dSYM companion, an Info.plist naming a missing file.
    { name: 'Payload/A.app/Base.lproj/Main.storyboardc/Info.plist', data: plist({ UIStoryboardDesignatedEntryPointIdentifier: 'x' }) },
    { name: 'Payload/A.app/A.dSYM/Contents/Info.plist', data: plist({ CFBundleIdentifier: 'com.apple.xcode.dsym.A', CFBundleExecutable: 'A' }) },
    { name: 'Payload/A.app/Stale.bundle/Info.plist', data: plist({ CFBundleIdentifier: 'com.stale', CFBundleExecutable: 'Gone' }) },
    { name: 'SwiftSupport/iphoneos/libswiftCore.dylib', data: MACHO },
    { name: 'Symbols/x.symbols', data: 'sym' },
    { name: 'iTunesMetadata.plist', data: plist({}) },
    { name: '__MACOSX/Payload/._A.app', data: 'fork' },
  ]).bytes;
}

describe('bundle discovery', () => {
  it('finds nested bundles by content and orders them leaf-first', async () => {
    const layout = await discoverLayout(await openIpa(new BufferSource(layoutZip())));
    assert.equal(layout.appDir, 'Payload/A.app/');
    assert.deepEqual(layout.postOrder.map((b) => [b.relativeDir, b.kind, b.bundleId]), [
      ['PlugIns/E.appex/Frameworks/In.framework/', 'framework', 'com.in'], // no package type: by extension
      ['PlugIns/E.appex/', 'appex', 'com.a.e'],
      ['Vendor/Odd.framework/', 'framework', 'com.odd'],
      ['Watch/W.app/', 'app', 'com.a.watch'],
      ['', 'app', 'com.a'],
    ]);
    assert.equal(layout.postOrder[0]!.parent?.bundleId, 'com.a.e');
    assert.deepEqual(layout.dropped.map((e) => e.name), ['__MACOSX/Payload/._A.app']);
    assert.deepEqual(layout.outside.map((e) => e.name), ['Payload/', 'SwiftSupport/iphoneos/libswiftCore.dylib', 'Symbols/x.symbols', 'iTunesMetadata.plist']);
  });

  it('refuses an app whose Info.plist names no executable, or a missing one', async () => {
    const noExe = buildZip([{ name: 'Payload/A.app/Info.plist', data: plist({ CFBundleIdentifier: 'com.a' }) }]).bytes;
    await assert.rejects(discoverLayout(await openIpa(new BufferSource(noExe))), (e: unknown) => e instanceof SigningError && e.code === 'ipa_invalid' && /no CFBundleExecutable/.test(e.message));
    const missing = buildZip([{ name: 'Payload/A.app/Info.plist', data: plist({ CFBundleIdentifier: 'com.a', CFBundleExecutable: 'A' }) }]).bytes;
    await assert.rejects(discoverLayout(await openIpa(new BufferSource(missing))), (e: unknown) => e instanceof SigningError && e.code === 'ipa_invalid' && /names the executable "A"/.test(e.message));
  });
});

describe('negative fixtures are refused at upload and at signing', needsSharedFixtures(), () => {
  const cases: Array<[string, string]> = [
    ['ios/fastlane/ipas/no-app-bundle.ipa', 'no_app_bundle'],
    ['ios/fastlane/ipas/not-an-ipa.ipa', 'not_a_zip'],
    ['ios/fastlane/ipas/iOSAppOnly.ipa', 'payload_not_at_root'],
    ['ios/fastlane/ipas/ContainsWatchApp.ipa', 'payload_not_at_root'],
    ['ios/fastlane/ipas/IncorrectlySigned.ipa', 'payload_not_at_root'],
    ['ios/isign/NotAnApp.ipa', 'no_app'],
  ];
  for (const [fixture, reason] of cases) {
    it(`${fixture.split('/').pop()} → invalid_package (${reason})`, async () => {
      const bytes = readFileSync(sharedFixture(fixture)!);
      const check = (error: unknown): boolean => {
        assert.ok(error instanceof SigningError, String(error));
        assert.equal(error.code, 'invalid_package');
        assert.equal(error.details?.reason, reason, error.message);
        assert.ok(error.message.length > 20);
        return true;
      };
      await assert.rejects(inspectPackage(new BufferSource(bytes)), check);
      const pki = testPki();
      const profile = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*' }));
      await assert.rejects(resignIpa(new BufferSource(bytes), new MemorySink(), { identity: pki.leaf, profiles: [profile], workers: 0 }), check);
    });
  }
});
