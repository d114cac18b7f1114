// The install page in a real browser (Debian's chromium driven by playwright-core), as an
// iPhone, an iPad in desktop mode, an Android phone, a desktop and WeChat's in-app browser see it.
// Screenshots land in test-output/distribution/; the QR code is decoded from a screenshot.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import jsQRModule from 'jsqr';
import { chromium, type Browser, type BrowserContextOptions } from 'playwright-core';
import { PNG } from 'pngjs';
import { distributionFixture, iconIpa, tinyApk, type DistributionFixture } from '../support/distribution.ts';
import { testOutputDir } from '../support/fixtures.ts';

// Debian's package; .ci/run installs it. CHROMIUM_PATH points elsewhere on other systems.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// jsqr is CommonJS; its typings describe the ES default export, which Node exposes one level down.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;
const skip = existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt-get install chromium)`;
if (skip) console.log(`NOTICE: browser tests skipped: ${skip}`);

const DEVICES: Record<string, BrowserContextOptions> = {
  iphone: {
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
  },
  // iPadOS Safari presents itself as a Mac by default; only touch support tells them apart.
  ipad: {
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
    viewport: { width: 820, height: 1180 }, hasTouch: true,
  },
  android: {
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
    viewport: { width: 412, height: 915 }, isMobile: true, hasTouch: true,
  },
  desktop: {
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    viewport: { width: 1280, height: 900 },
  },
  wechat: {
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.47(0x18002f2c) NetType/WIFI Language/zh_CN',
    viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true,
  },
};

describe('install page in chromium', { skip }, () => {
  let fx: DistributionFixture;
  let browser: Browser;
  let iosUrl: string;
  let androidUrl: string;
  const shots = testOutputDir('distribution');

  before(async () => {
    mkdirSync(shots, { recursive: true });
    fx = await distributionFixture('browser');
    iosUrl = (await fx.release('Demo.ipa', iconIpa())).distribution.url;
    androidUrl = (await fx.release('demo.apk', tinyApk({ label: 'Droid Demo' }))).distribution.url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  async function visit(device: string, url: string, options: { javaScriptEnabled?: boolean } = {}) {
    const context = await browser.newContext({ ...DEVICES[device], ...options });
    const page = await context.newPage();
    const response = await page.goto(url);
    assert.equal(response?.status(), 200);
    return { page, close: () => context.close() };
  }

  it('an iPhone gets the itms-services install button first', async () => {
    const { page, close } = await visit('iphone', iosUrl);
    const button = page.locator('#install');
    assert.equal(await button.isVisible(), true);
    assert.match((await button.getAttribute('href')) ?? '', /^itms-services:\/\/\?action=download-manifest&url=https%3A|^itms-services:\/\/\?action=download-manifest&url=http%3A/);
    assert.equal(await button.textContent(), 'Install');
    assert.equal(await page.locator('#in-app-overlay').count(), 0);
    assert.ok((await page.locator('img.icon').evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0, 'the converted icon renders');
    await page.screenshot({ path: path.join(shots, 'iphone.png'), fullPage: true });
    await close();
  });

  it('an iPad in desktop mode gets the install button once touch is detected', async () => {
    const { page, close } = await visit('ipad', iosUrl);
    const button = page.locator('#install');
    assert.equal(await button.isVisible(), true);
    assert.match((await button.getAttribute('href')) ?? '', /^itms-services:/);
    await page.screenshot({ path: path.join(shots, 'ipad-desktop-ua.png'), fullPage: true });
    await close();
  });

  it('without JavaScript, the iPad still gets a working install link', async () => {
    const { page, close } = await visit('ipad', iosUrl, { javaScriptEnabled: false });
    assert.match((await page.locator('#install-ipad').getAttribute('href')) ?? '', /^itms-services:/);
    await close();
  });

  it('an Android phone gets the APK download, and is told an iOS app will not install', async () => {
    const { page, close } = await visit('android', androidUrl);
    const button = page.locator('#install');
    assert.equal(await button.textContent(), 'Download APK');
    assert.equal(await button.getAttribute('href'), `${androidUrl}/download`);
    await page.screenshot({ path: path.join(shots, 'android.png'), fullPage: true });
    await close();
    const other = await visit('android', iosUrl);
    assert.equal(await other.page.locator('#install').count(), 0);
    assert.match(await other.page.locator('.notice').first().textContent() ?? '', /cannot be installed on this device/);
    await other.close();
  });

  it('a desktop visitor sees the QR code first, and it decodes to the page URL', async () => {
    const { page, close } = await visit('desktop', iosUrl);
    assert.equal(await page.locator('#install').count(), 0);
    const order = await page.evaluate(() => {
      const qr = document.getElementById('qr');
      const hint = document.querySelector('.hint');
      return qr && hint ? Boolean(qr.compareDocumentPosition(hint) & Node.DOCUMENT_POSITION_FOLLOWING) : null;
    });
    assert.equal(order, true, 'the QR code comes before the hint');
    const shot = await page.locator('#qr svg').screenshot({ path: path.join(shots, 'desktop-qr.png') });
    const png = PNG.sync.read(shot);
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    assert.equal(decoded?.data, iosUrl);
    await page.screenshot({ path: path.join(shots, 'desktop.png'), fullPage: true });
    await close();
  });

  it('WeChat gets an overlay telling the user to open the page in Safari', async () => {
    const { page, close } = await visit('wechat', iosUrl);
    const overlay = page.locator('#in-app-overlay');
    assert.equal(await overlay.isVisible(), true);
    assert.match((await overlay.textContent()) ?? '', /Open in Safari/);
    assert.match((await overlay.textContent()) ?? '', /WeChat blocks app installs/);
    await page.screenshot({ path: path.join(shots, 'wechat.png'), fullPage: true });
    await close();
  });
});
