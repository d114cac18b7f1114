// Apps whose icon exists only in Assets.car get their real icon on the install page: read once
// when the release is published, on a worker thread (decoding a catalog icon is 0.3–0.5 s of
// CPU, and the embedded worker shares the API's event loop), stored, then served from storage.
// The public DemoApp needs ../shared/fixtures/ios/assets-car; the generated catalog does not.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { normalizePng } from '../../src/distribution/cgbi.ts';
import { ReleaseReader } from '../../src/distribution/release-reader.ts';
import { BufferSource, FileSource } from '../../src/signing/data-source.ts';
import { inspectPackage } from '../../src/signing/inspect/index.ts';
import { catalogOnlyDemoApp, demoAppLooseIcon, GENERATED_ICON, generatedCatalogIpa } from '../support/catalog-apps.ts';
import { distributionFixture, type DistributionFixture } from '../support/distribution.ts';
import { needsSharedFixtures } from '../support/fixtures.ts';
import { freshDataDir } from '../support/server.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

let fx: DistributionFixture;
before(async () => {
  fx = await distributionFixture('catalog-icons');
});
after(() => fx?.close());

async function pageIcon(distributionUrl: string): Promise<PNG> {
  const page = await (await fetch(distributionUrl, { headers: { 'user-agent': IPHONE } })).text();
  const src = /<img class="icon" src="([^"]+)"/.exec(page)?.[1];
  assert.ok(src, 'the page shows an icon, not the placeholder');
  const icon = await fetch(new URL(src, distributionUrl));
  assert.equal(icon.headers.get('content-type'), 'image/png');
  return PNG.sync.read(Buffer.from(await icon.arrayBuffer()));
}

describe('install page of an app whose icon is only in Assets.car', () => {
  it('shows the icon decoded from a generated catalog (LZFSE)', async () => {
    const { distribution } = await fx.release('Catalog.ipa', generatedCatalogIpa());
    const png = await pageIcon(distribution.url);
    const { size, top, bottom } = GENERATED_ICON;
    assert.deepEqual([png.width, png.height], [size, size]);
    assert.deepEqual([...png.data.subarray(0, 4)], [...top, 0xff], 'top-left corner');
    assert.deepEqual([...png.data.subarray(png.data.length - 4)], [...bottom, 0xff], 'bottom-right corner');
  });

  it('shows the real icon of the public DemoApp, matching its own loose PNG', needsSharedFixtures('ios/assets-car'), async () => {
    const { distribution } = await fx.release('DemoApp.ipa', await catalogOnlyDemoApp());
    const png = await pageIcon(distribution.url);
    assert.deepEqual([png.width, png.height], [1024, 1024]);
    const loose = PNG.sync.read(normalizePng(demoAppLooseIcon()));
    const scale = png.width / loose.width;
    // Points spread over the icon, averaged over the scaled block so resampling does not matter.
    for (const [x, y] of [[20, 20], [60, 60], [100, 30], [30, 100]] as const) {
      for (let c = 0; c < 3; c++) {
        const big = png.data[((Math.floor(y * scale) + 2) * png.width + Math.floor(x * scale) + 2) * 4 + c]!;
        assert.ok(Math.abs(big - loose.data[(y * loose.width + x) * 4 + c]!) <= 6, `pixel ${x},${y} channel ${c}`);
      }
    }
  });
});

describe('reading a release off the event loop', needsSharedFixtures('ios/assets-car'), () => {
  it('keeps the event loop turning while a catalog icon is decoded', async () => {
    const ipa = await catalogOnlyDemoApp();
    const file = path.join(freshDataDir('release-reader'), 'DemoApp.ipa');
    writeFileSync(file, ipa);
    // The same work on this thread, for comparison: the event loop stalls for all of it.
    const started = performance.now();
    const inline = await inspectPackage(new BufferSource(ipa));
    const inlineMs = performance.now() - started;
    assert.equal(inline.icon?.source, 'asset-catalog');

    const reader = new ReleaseReader();
    try {
      const source = await FileSource.open(file);
      await reader.read(source); // start the thread and load its modules first
      let last = performance.now();
      let longestGap = 0;
      const tick = setInterval(() => {
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
      }, 5);
      const facts = await reader.read(source);
      await source.close();
      clearInterval(tick);
      assert.equal(facts.icon?.format, 'png');
      assert.deepEqual([facts.minimumOs, facts.deviceFamilies], [inline.platform === 'ios' ? inline.minOs : null, ['iphone', 'ipad']]);
      assert.ok(Buffer.isBuffer(facts.icon?.bytes), 'the icon comes back as a Buffer');
      assert.ok(longestGap < inlineMs / 2, `longest event-loop stall ${longestGap.toFixed(0)} ms while decoding on the thread; ${inlineMs.toFixed(0)} ms inline`);
    } finally {
      await reader.close();
    }
  });
});
