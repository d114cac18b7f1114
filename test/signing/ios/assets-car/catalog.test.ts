// Round trips through the test writer (test/support/assets-car-writer.ts): every compression and
// pixel format the reader supports, chunked and unchunked pixel data, app icon selection, and
// refusals with catalogue codes for malformed or unsupported catalogs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { SigningError } from '../../../../src/signing/errors.ts';
import { parseAssetCatalog, readCatalogAppIcon, renditionPng } from '../../../../src/signing/ios/assets-car/index.ts';
import { buildAssetCatalog, type Compression, type TestRendition } from '../../../support/assets-car-writer.ts';
import { encodeRgbaPng } from '../../../../src/signing/png/index.ts';

/** A deterministic gradient with transparent, translucent and opaque pixels. */
function pattern(width: number, height: number): Buffer {
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      rgba[i] = (x * 7) & 0xff;
      rgba[i + 1] = (y * 5) & 0xff;
      rgba[i + 2] = (x + y) & 0xff;
      rgba[i + 3] = x < 2 ? 0 : y < 2 ? 128 : 255;
      if (rgba[i + 3] === 0) rgba[i] = rgba[i + 1] = rgba[i + 2] = 0;
    }
  }
  return rgba;
}

function decodePng(png: Buffer): { width: number; height: number; data: Buffer } {
  const image = PNG.sync.read(png);
  return { width: image.width, height: image.height, data: image.data };
}

/** Largest per-channel difference; premultiplication loses precision at low alpha, so compare opaque and half-alpha pixels. */
function maxDifference(a: Buffer, b: Buffer): number {
  let max = 0;
  for (let i = 0; i < a.length; i += 4) {
    if (a[i + 3] === 0 && b[i + 3] === 0) continue;
    for (let c = 0; c < 4; c++) max = Math.max(max, Math.abs(a[i + c]! - b[i + c]!));
  }
  return max;
}

const icon = (extra: Partial<TestRendition>): TestRendition => ({ facet: 'AppIcon', width: 24, height: 20, rgba: pattern(24, 20), ...extra });

function assertCode(code: string, pattern?: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof SigningError, String(error));
    assert.equal(error.code, code, error.message);
    if (pattern) assert.match(error.message, pattern);
    return true;
  };
}

describe('Assets.car round trips', () => {
  for (const compression of ['none', 'zlib', 'lzvn', 'lzfse'] as Compression[]) {
    for (const chunkRows of [undefined, 7]) {
      for (const pixelFormat of ['ARGB', 'RGBW'] as const) {
        it(`${pixelFormat} pixels, ${compression}${chunkRows ? ', KCBC chunks' : ''}`, () => {
          const catalog = buildAssetCatalog([icon({ compression, chunkRows, pixelFormat })]);
          const found = readCatalogAppIcon(catalog);
          assert.ok(found !== null && found.png !== null);
          const image = decodePng(found.png);
          assert.deepEqual([image.width, image.height, found.width, found.height], [24, 20, 24, 20]);
          // ARGB: premultiplied 8-bit loses at most 2 levels at alpha 128; RGBW half floats 1.
          assert.ok(maxDifference(image.data, pattern(24, 20)) <= 2, `max difference ${maxDifference(image.data, pattern(24, 20))}`);
        });
      }
    }
  }

  it('reads the catalog structures back', () => {
    const catalog = parseAssetCatalog(buildAssetCatalog([icon({}), { facet: 'Logo', width: 4, height: 4, rgba: pattern(4, 4) }], { appearances: { UIAppearanceAny: 0, UIAppearanceDark: 1 } }));
    assert.equal(catalog.header.coreUiVersion, 918);
    assert.deepEqual([...catalog.facets.keys()], ['AppIcon', 'Logo']);
    assert.deepEqual(Object.fromEntries(catalog.appearances), { UIAppearanceAny: 0, UIAppearanceDark: 1 });
    assert.equal(catalog.renditions.length, 2);
    assert.deepEqual(catalog.renditions.map((r) => [r.facet, r.csi.width, r.csi.height, r.csi.pixelFormat, r.csi.layout]), [['AppIcon', 24, 20, 'ARGB', 12], ['Logo', 4, 4, 'ARGB', 12]]);
  });

  it('returns a PNG stored as raw data unchanged', () => {
    const png = encodeRgbaPng(pattern(5, 5), 5, 5);
    const found = readCatalogAppIcon(buildAssetCatalog([{ facet: 'AppIcon', width: 5, height: 5, kind: 'raw-png', png }]));
    assert.ok(found?.png?.equals(png));
  });
});

describe('Assets.car app icon selection', () => {
  const solid = (w: number, value: number): Buffer => Buffer.alloc(w * w * 4, value).fill(255, 3, undefined);

  it('takes the largest iPhone/iPad icon, ignoring dark appearances, other facets and the marketing icon while device icons exist', () => {
    const catalog = buildAssetCatalog([
      { facet: 'AppIcon', width: 40, height: 40, rgba: solid(40, 10), idiom: 1, name: 'phone-40.png' },
      { facet: 'AppIcon', width: 76, height: 76, rgba: solid(76, 20), idiom: 2, name: 'pad-76.png' },
      { facet: 'AppIcon', width: 90, height: 90, rgba: solid(90, 30), idiom: 1, appearance: 1, name: 'dark-90.png' },
      { facet: 'AppIcon', width: 100, height: 100, rgba: solid(100, 40), idiom: 6, name: 'marketing-100.png' },
      { facet: 'Other', width: 120, height: 120, rgba: solid(120, 50), idiom: 1 },
      { facet: 'AppIcon', width: 0, height: 0, kind: 'multisize-set' },
    ], { appearances: { UIAppearanceAny: 0, UIAppearanceDark: 1 } });
    const found = readCatalogAppIcon(catalog);
    assert.deepEqual([found?.renditionName, found?.width, found?.idiom], ['pad-76.png', 76, 2]);
  });

  it('falls back to the marketing icon, follows CFBundleIconName and prefers sRGB at equal size', () => {
    const marketingOnly = buildAssetCatalog([{ facet: 'AppIcon', width: 30, height: 30, rgba: solid(30, 1), idiom: 6 }]);
    assert.equal(readCatalogAppIcon(marketingOnly)?.width, 30);
    const named = buildAssetCatalog([{ facet: 'BetaIcon', width: 12, height: 12, rgba: solid(12, 1) }]);
    assert.equal(readCatalogAppIcon(named), null);
    assert.equal(readCatalogAppIcon(named, 'BetaIcon')?.width, 12);
    const gamuts = buildAssetCatalog([
      { facet: 'AppIcon', width: 16, height: 16, rgba: solid(16, 1), gamut: 1, name: 'p3.png' },
      { facet: 'AppIcon', width: 16, height: 16, rgba: solid(16, 1), gamut: 0, name: 'srgb.png' },
    ]);
    assert.equal(readCatalogAppIcon(gamuts)?.renditionName, 'srgb.png');
  });

  it('decodes a smaller icon when the largest uses an unsupported compression, and reports it when none decodes', () => {
    const mixed = buildAssetCatalog([
      { facet: 'AppIcon', width: 64, height: 64, rgba: solid(64, 1), compression: 'deepmap2', name: 'deep.png' },
      { facet: 'AppIcon', width: 32, height: 32, rgba: solid(32, 1), name: 'plain.png' },
    ]);
    assert.equal(readCatalogAppIcon(mixed)?.renditionName, 'plain.png');
    const only = buildAssetCatalog([{ facet: 'AppIcon', width: 64, height: 64, rgba: solid(64, 1), compression: 'deepmap2' }]);
    assert.throws(() => readCatalogAppIcon(only), assertCode('asset_catalog_unsupported', /deepmap2/));
    // Without decoding, the same check runs on the encoding alone.
    assert.throws(() => readCatalogAppIcon(only, 'AppIcon', false), assertCode('asset_catalog_unsupported', /deepmap2/));
    assert.equal(readCatalogAppIcon(mixed, 'AppIcon', false)?.png, null);
  });
});

describe('Assets.car refusals', () => {
  const good = buildAssetCatalog([icon({ compression: 'lzfse', chunkRows: 5 })]);

  it('refuses what is not a BOM store, or one whose tables lie outside the file', () => {
    assert.throws(() => parseAssetCatalog(Buffer.from('not a catalog')), assertCode('asset_catalog_invalid', /BOMStore/));
    const badIndex = Buffer.from(good);
    badIndex.writeUInt32BE(0xfffffff0, 16);
    assert.throws(() => parseAssetCatalog(badIndex), assertCode('asset_catalog_invalid', /block index/));
    const manyBlocks = Buffer.from(good);
    manyBlocks.writeUInt32BE(0x7fffffff, manyBlocks.readUInt32BE(16));
    assert.throws(() => parseAssetCatalog(manyBlocks), assertCode('asset_catalog_invalid', /blocks/));
  });

  it('refuses every truncation with a catalogue code', () => {
    for (let length = 0; length < good.length; length += 37) {
      try {
        readCatalogAppIcon(good.subarray(0, length));
      } catch (error) {
        assert.ok(error instanceof SigningError && error.code.startsWith('asset_catalog_'), `length ${length}: ${String(error)}`);
      }
    }
  });

  it('refuses an implausible size, a bad stride and pixel data shorter than declared', () => {
    const rendition = (extra: Partial<TestRendition>) => parseAssetCatalog(buildAssetCatalog([icon(extra)])).renditions[0]!.csi;
    const csi = rendition({ compression: 'none' });
    assert.throws(() => renditionPng({ ...csi, width: 5000 }), assertCode('asset_catalog_invalid', /implausible size/));
    assert.throws(() => renditionPng({ ...csi, properties: new Map([[1007, Buffer.from([1, 0, 0, 0])]]) }), assertCode('asset_catalog_invalid', /stride/));
    assert.throws(() => renditionPng({ ...csi, height: 40 }), assertCode('asset_catalog_invalid', /expected/));
    assert.throws(() => renditionPng({ ...csi, pixelFormat: 'GA16' }), assertCode('asset_catalog_unsupported', /GA16/));
    const zlib = rendition({ compression: 'zlib' });
    const corrupt = Buffer.from(zlib.data);
    corrupt.fill(0xff, 20, 40);
    assert.throws(() => renditionPng({ ...zlib, data: corrupt }), assertCode('asset_catalog_invalid'));
  });
});
