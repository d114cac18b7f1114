// Real compiled asset catalogs from public repositories (../shared/fixtures/ios/assets-car, see
// SOURCES.tsv there): the Xcode 16.4 DemoApp icon (RGBW half floats, LZFSE 'bvx2' in KCBC chunks)
// must match the app's own loose PNGs, and every bitmap of the other catalogs must decode or be
// refused as unsupported with a catalogue code.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { normalizePng } from '../../../../src/distribution/cgbi.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { parseAssetCatalog, readCatalogAppIcon, renditionPng } from '../../../../src/signing/ios/assets-car/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';

const fixture = (path: string): Buffer => readFileSync(sharedFixture(`ios/assets-car/${path}`)!);

/** Mean absolute difference per colour channel between `small` and `big` box-filtered to its size. */
function meanDifferenceAfterDownscale(big: PNG, small: PNG): number {
  const scale = big.width / small.width;
  let total = 0;
  for (let y = 0; y < small.height; y++) {
    for (let x = 0; x < small.width; x++) {
      for (let c = 0; c < 3; c++) {
        let sum = 0, weight = 0;
        const x0 = x * scale, x1 = (x + 1) * scale, y0 = y * scale, y1 = (y + 1) * scale;
        for (let sy = Math.floor(y0); sy < Math.ceil(y1); sy++) {
          for (let sx = Math.floor(x0); sx < Math.ceil(x1); sx++) {
            const w = (Math.min(sx + 1, x1) - Math.max(sx, x0)) * (Math.min(sy + 1, y1) - Math.max(sy, y0));
            sum += big.data[(sy * big.width + sx) * 4 + c]! * w;
            weight += w;
          }
        }
        total += Math.abs(sum / weight - small.data[(y * small.width + x) * 4 + c]!);
      }
    }
  }
  return total / (small.width * small.height * 3);
}

describe('Assets.car: real catalogs', needsSharedFixtures('ios/assets-car'), () => {
  it("decodes the sentry-cli DemoApp AppIcon to the pixels of the app's own loose PNGs", () => {
    const icon = readCatalogAppIcon(fixture('sentry-cli/DemoApp.app/Assets.car'));
    assert.ok(icon !== null && icon.png !== null);
    assert.deepEqual([icon.width, icon.height, icon.idiom, icon.renditionName], [1024, 1024, 1, 'Primary-Light@2x.png']);
    const big = PNG.sync.read(icon.png);
    assert.deepEqual([big.width, big.height], [1024, 1024]);
    // The catalog holds only the 1024-pixel icon; Xcode derived the loose 120- and 152-pixel
    // PNGs from it, so the decoded icon, box-filtered to their size, must match them closely
    // (a wrong byte order, gamma or half-float reading is off by 20+ levels on average).
    for (const [name, size] of [['AppIcon60x60@2x.png', 120], ['AppIcon76x76@2x~ipad.png', 152]] as const) {
      const loose = PNG.sync.read(normalizePng(fixture(`sentry-cli/DemoApp.app/${name}`)));
      assert.equal(loose.width, size);
      const mean = meanDifferenceAfterDownscale(big, loose);
      assert.ok(mean < 3, `${name}: mean difference ${mean.toFixed(2)} levels`);
    }
  });

  it('decodes every bitmap of the acextract and isign catalogs (LZFSE, chunked and packed)', () => {
    const files = ['acextract/assets_ios.car', 'acextract/assets_iphone.car', 'acextract/assets_ipad.car', 'acextract/assets_mac.car', 'acextract/assets_tv.car', 'acextract/assets_watch.car'];
    let decoded = 0;
    for (const file of files) {
      for (const r of parseAssetCatalog(fixture(file)).renditions) {
        if (r.csi.data.toString('latin1', 0, 4) !== 'MLEC') continue;
        const png = PNG.sync.read(renditionPng(r.csi));
        assert.deepEqual([png.width, png.height], [r.csi.width, r.csi.height], `${file} ${r.csi.name}`);
        decoded++;
      }
    }
    assert.ok(decoded > 200, `${decoded} bitmaps`);
    const isign = parseAssetCatalog(readFileSync(sharedFixture('ios/isign/Test.app/Assets.car')!));
    assert.deepEqual([...isign.facets.keys()].sort(), ['first', 'second']);
  });

  it('refuses what it cannot decode with asset_catalog_unsupported (JPEG raw data, deepmap2)', () => {
    const jpeg = parseAssetCatalog(fixture('sentry-cli/product-image/Assets.car'));
    assert.deepEqual([...jpeg.facets.keys()], ['product-image']);
    assert.throws(() => renditionPng(jpeg.renditions[0]!.csi), (e: unknown) => e instanceof SigningError && e.code === 'asset_catalog_unsupported');
    const deep = parseAssetCatalog(fixture('appium-uikitcatalog/Assets.car'));
    const deepmap = deep.renditions.filter((r) => r.csi.data.toString('latin1', 0, 4) === 'MLEC' && r.csi.data.readUInt32LE(8) === 11);
    assert.ok(deepmap.length > 0);
    for (const r of deepmap) assert.throws(() => renditionPng(r.csi), /compression deepmap2 is not supported/);
    assert.equal(readCatalogAppIcon(fixture('appium-uikitcatalog/Assets.car')), null); // it has no AppIcon
  });
});
