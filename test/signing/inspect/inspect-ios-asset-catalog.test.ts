// inspectPackage on apps whose icon exists only inside Assets.car: the public sentry-cli DemoApp
// with its loose PNGs and Info.plist icon-file entries removed, and .ipa files built here with the
// test catalog writer (CFBundleIconName, unreadable catalogs, no catalog at all).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { normalizePng } from '../../../src/distribution/cgbi.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { inspectPackage, type PackageInfo } from '../../../src/signing/inspect/index.ts';
import { plistFromJs, writeXmlPlist } from '../../../src/signing/plist/index.ts';
import { buildAssetCatalog } from '../../support/assets-car-writer.ts';
import { catalogOnlyDemoApp, demoAppLooseIcon } from '../../support/catalog-apps.ts';
import { needsSharedFixtures } from '../../support/fixtures.ts';
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
    const stripped = await catalogOnlyDemoApp();
    const result = await inspect(stripped);
    assert.ok(result.icon !== null, result.iconIssue ?? '');
    assert.deepEqual([result.icon.path, result.icon.source, result.icon.cgbi, result.icon.width, result.icon.height], ['Payload/DemoApp.app/Assets.car', 'asset-catalog', false, 1024, 1024]);
    assert.equal(result.iconIssue, null);
    // The bytes are a standard PNG whose pixels agree with the app's own (removed) 120-pixel icon.
    const decoded = PNG.sync.read(result.icon.bytes!);
    const loose = PNG.sync.read(normalizePng(demoAppLooseIcon()));
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
