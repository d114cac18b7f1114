// iOS apps whose icon exists only in the compiled asset catalog (Assets.car), as most apps built
// with Xcode's single-size app icons are: the public sentry-cli DemoApp (../shared/fixtures) with
// its loose AppIcon PNGs and Info.plist icon-file entries removed, and an app built here around a
// catalog from the test writer, so the path is tested without the corpus too.
import { readFileSync } from 'node:fs';
import { BufferSource } from '../../src/signing/data-source.ts';
import { parsePlist, plistFromJs, plistToJs, writeXmlPlist } from '../../src/signing/plist/index.ts';
import { ZipReader } from '../../src/signing/zip/index.ts';
import { buildAssetCatalog } from './assets-car-writer.ts';
import { sharedFixture } from './fixtures.ts';
import { buildZip } from './zip-builder.ts';

/** The DemoApp .ipa without loose icons (needs ../shared/fixtures/ios/assets-car). */
export async function catalogOnlyDemoApp(): Promise<Buffer> {
  const original = readFileSync(sharedFixture('ios/assets-car/sentry-cli/ipa_with_asset.ipa')!);
  const zip = await ZipReader.open(new BufferSource(original));
  const entries = [];
  for (const entry of zip.entries) {
    if (entry.isDirectory || /AppIcon[^/]*\.png$/.test(entry.name) || entry.name.startsWith('__MACOSX/')) continue;
    let data = await zip.readEntry(entry, 16 * 1024 * 1024);
    if (entry.name === 'Payload/DemoApp.app/Info.plist') {
      const plist = plistToJs(parsePlist(data).value) as Record<string, Record<string, Record<string, unknown>>>;
      for (const key of ['CFBundleIcons', 'CFBundleIcons~ipad']) delete plist[key]!.CFBundlePrimaryIcon!.CFBundleIconFiles;
      data = writeXmlPlist(plistFromJs(plist));
    }
    entries.push({ name: entry.name, data });
  }
  return buildZip(entries).bytes;
}

/** The DemoApp's own loose 120-pixel icon (a CgBI PNG), to compare decoded pixels with. */
export function demoAppLooseIcon(): Buffer {
  return readFileSync(sharedFixture('ios/assets-car/sentry-cli/DemoApp.app/AppIcon60x60@2x.png')!);
}

/** Size of the generated catalog's icon, and its colours: a diagonal two-tone square. */
export const GENERATED_ICON = { size: 180, top: [0xff, 0x6a, 0x00], bottom: [0x1f, 0x3b, 0x8f] } as const;

/** An .ipa whose only icon is an LZFSE-compressed 180×180 rendition of "AppIcon" in Assets.car. */
export function generatedCatalogIpa(options: { bundleId?: string; name?: string; version?: string } = {}): Buffer {
  const { size, top, bottom } = GENERATED_ICON;
  const rgba = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) rgba.set([...(x + y < size ? top : bottom), 0xff], (y * size + x) * 4);
  }
  const car = buildAssetCatalog([{ facet: 'AppIcon', width: size, height: size, rgba, compression: 'lzfse', idiom: 1, scale: 3 }]);
  const info = writeXmlPlist(plistFromJs({
    CFBundleIdentifier: options.bundleId ?? 'com.example.catalog',
    CFBundleDisplayName: options.name ?? 'Catalog Icon',
    CFBundleExecutable: 'Catalog',
    CFBundleShortVersionString: options.version ?? '2.4',
    CFBundleVersion: '240',
    MinimumOSVersion: '16.0',
    UIDeviceFamily: [1, 2],
    CFBundleIcons: { CFBundlePrimaryIcon: { CFBundleIconName: 'AppIcon' } },
  }));
  return buildZip([
    { name: 'Payload/Catalog.app/Info.plist', data: info },
    { name: 'Payload/Catalog.app/Catalog', data: Buffer.alloc(4096, 0xcf) },
    { name: 'Payload/Catalog.app/Assets.car', data: car },
  ]).bytes;
}
