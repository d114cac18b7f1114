// inspectPackage on apps whose icon exists only inside Assets.car: the public sentry-cli DemoApp
// with its loose PNGs and Info.plist icon-file entries removed, and .ipa files built here with the
// test catalog writer (CFBundleIconName, unreadable catalogs, no catalog at all).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { normalizePng } from '../../../src/distribution/cgbi.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { inspectPackage, type PackageInfo } from '../../../src/signing/inspect/index.ts';
import { parsePlist, plistFromJs, plistToJs, writeXmlPlist } from '../../../src/signing/plist/index.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { buildAssetCatalog } from '../../support/assets-car-writer.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { buildZip } from '../../support/zip-builder.ts';

async function inspect(bytes: Buffer, iconBytes = true): Promise<PackageInfo> {
  return inspectPackage(new BufferSource(bytes), { iconBytes });
}

const info = (extra: Record<string, unknown> = {}): Buffer => writeXmlPlist(plistFromJs({ CFBundleIdentifier: 'com.example.car', CFBundleExecutable: 'Car', ...extra }));
const solid = (w: number, rgb: [number, number, number]): Buffer => {
  const b = Buffer.alloc(w * w * 4);
  for (let i = 0; i < b.length; i += 4) b.set([...rgb, 255], i);
  return b;
};

describe('inspectPackage: icon only in Assets.car (public app)', needsSharedFixtures('ios/assets-car'), () => {
  it('shows the real icon of the sentry-cli DemoApp once its loose PNGs are gone', async () => {
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
    const stripped = buildZip(entries).bytes;
    const result = await inspect(stripped);
    assert.ok(result.icon !== null, result.iconIssue ?? '');
    assert.deepEqual([result.icon.path, result.icon.source, result.icon.cgbi, result.icon.width, result.icon.height], ['Payload/DemoApp.app/Assets.car', 'asset-catalog', false, 1024, 1024]);
    assert.equal(result.iconIssue, null);
    // The bytes are a standard PNG whose pixels agree with the app's own (removed) 120-pixel icon.
    const decoded = PNG.sync.read(result.icon.bytes!);
    const loose = PNG.sync.read(normalizePng(readFileSync(sharedFixture('ios/assets-car/sentry-cli/DemoApp.app/AppIcon60x60@2x.png')!)));
    const [x, y] = [20, 20]; // a flat area of the orange background
    const bigAt = (decoded.height / loose.height) | 0;
    for (let c = 0; c < 3; c++) {
      assert.ok(Math.abs(decoded.data[((y * bigAt) * decoded.width + x * bigAt) * 4 + c]! - loose.data[(y * loose.width + x) * 4 + c]!) <= 3);
    }
    // Upload validation (no icon bytes) reports the same icon without decoding it.
    const light = await inspect(stripped, false);
    assert.deepEqual([light.icon?.source, light.icon?.width, light.icon?.bytes], ['asset-catalog', 1024, null]);
  });
});

describe('inspectPackage: icon only in Assets.car (built catalogs)', () => {
  it('uses CFBundleIconName to find the icon facet', async () => {
    const car = buildAssetCatalog([
      { facet: 'AppIcon', width: 20, height: 20, rgba: solid(20, [255, 0, 0]) },
      { facet: 'BetaIcon', width: 40, height: 40, rgba: solid(40, [0, 0, 255]), compression: 'zlib', chunkRows: 9 },
    ]);
    const plist = info({ CFBundleIcons: { CFBundlePrimaryIcon: { CFBundleIconName: 'BetaIcon' } } });
    const result = await inspect(buildZip([{ name: 'Payload/Car.app/Info.plist', data: plist }, { name: 'Payload/Car.app/Assets.car', data: car }]).bytes);
    assert.deepEqual([result.icon?.width, result.icon?.source], [40, 'asset-catalog']);
    const png = PNG.sync.read(result.icon!.bytes!);
    assert.deepEqual([...png.data.subarray(0, 4)], [0, 0, 255, 255]);
  });

  it('explains a missing icon in every case instead of failing the package', async () => {
    const withCar = async (car: Buffer | null, extra: Record<string, unknown> = {}): Promise<PackageInfo> => inspect(buildZip([
      { name: 'Payload/Car.app/Info.plist', data: info(extra) },
      ...(car === null ? [] : [{ name: 'Payload/Car.app/Assets.car', data: car }]),
    ]).bytes);
    const none = await withCar(null);
    assert.equal(none.icon, null);
    assert.match(none.iconIssue ?? '', /names no icon files and the bundle has no AppIcon\*\.png, and there is no Assets\.car/);
    const other = await withCar(buildAssetCatalog([{ facet: 'Logo', width: 8, height: 8, rgba: solid(8, [1, 2, 3]) }]));
    assert.match(other.iconIssue ?? '', /Assets\.car has no "AppIcon" app icon/);
    const broken = await withCar(Buffer.from('BOMStore but not really'));
    assert.match(broken.iconIssue ?? '', /cannot be read \(asset_catalog_invalid/);
    const deep = await withCar(buildAssetCatalog([{ facet: 'AppIcon', width: 8, height: 8, rgba: solid(8, [1, 2, 3]), compression: 'deepmap2' }]));
    assert.match(deep.iconIssue ?? '', /asset_catalog_unsupported.*deepmap2/);
  });
});
