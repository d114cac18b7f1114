// The install page in a real browser (Debian's chromium driven by playwright-core), as an
// iPhone, an iPad in desktop mode, an Android phone, a desktop and WeChat's in-app browser see
// it, in English and Simplified Chinese. Screenshots land in
// test-output/distribution/screenshots/<language>/; the QR code is decoded from a screenshot.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import jsQRModule from 'jsqr';
import type { Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import { browserSkip, launchChromium, screenshot, screenshotPath, visit, type PageLanguage } from '../support/browser.ts';
import { distributionFixture, iconIpa, tinyApk, type DistributionFixture } from '../support/distribution.ts';

// jsqr is CommonJS; its typings describe the ES default export, which Node exposes one level down.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;

const TEXT = {
  en: { install: 'Install', apk: 'Download APK', wrongDevice: /cannot be installed on this device/, overlay: [/Open in Safari/, /WeChat blocks app installs/], requires: 'iOS 15.0 or later' },
  'zh-CN': { install: '安装', apk: '下载 APK', wrongDevice: /无法安装在当前设备上/, overlay: [/请在 Safari 中打开/, /微信内无法安装应用/], requires: 'iOS 15.0 或更高版本' },
} as const;

describe('install page in chromium', { skip: browserSkip }, () => {
  let fx: DistributionFixture;
  let browser: Browser;
  let iosUrl: string;
  let androidUrl: string;

  before(async () => {
    fx = await distributionFixture('browser');
    const ios = await fx.release('Demo.ipa', iconIpa());
    iosUrl = ios.distribution.url;
    await fx.configure(ios.distribution.id, { max_downloads: 500, expires_at: new Date(Date.now() + 14 * 86_400_000).toISOString() });
    androidUrl = (await fx.release('demo.apk', tinyApk({ label: 'Droid Demo', versionName: '4.2.0', minSdk: 26, abis: ['arm64-v8a', 'armeabi-v7a'] }))).distribution.url;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  for (const language of ['en', 'zh-CN'] as const satisfies readonly PageLanguage[]) {
    const t = TEXT[language];
    describe(language, () => {
      it('an iPhone gets the itms-services install button first, and what the build requires', async () => {
        const { page, status, close } = await visit(browser, 'iphone', language, iosUrl);
        assert.equal(status, 200);
        assert.equal(await page.getAttribute('html', 'lang'), language);
        const button = page.locator('#install');
        assert.equal(await button.isVisible(), true);
        assert.match((await button.getAttribute('href')) ?? '', /^itms-services:\/\/\?action=download-manifest&url=https?%3A/);
        assert.equal(await button.textContent(), t.install);
        assert.equal(await page.locator('#in-app-overlay').count(), 0);
        assert.ok((await page.locator('img.icon').evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0, 'the converted icon renders');
        assert.equal(await page.locator('[data-fact="requires"]').textContent(), t.requires);
        assert.equal(await page.locator('.button').evaluate((el) => getComputedStyle(el).borderRadius), '999px', 'the stylesheet loaded');
        await screenshot(page, { path: screenshotPath(language, 'iphone'), fullPage: true });
        await close();
      });

      it('an iPad in desktop mode gets the install button once touch is detected', async () => {
        const { page, close } = await visit(browser, 'ipad', language, iosUrl);
        const button = page.locator('#install');
        assert.equal(await button.isVisible(), true);
        assert.equal(await button.textContent(), t.install);
        assert.match((await button.getAttribute('href')) ?? '', /^itms-services:/);
        await screenshot(page, { path: screenshotPath(language, 'ipad-desktop-ua'), fullPage: true });
        await close();
      });

      it('without JavaScript, the iPad still gets a working install link', async () => {
        const { page, close } = await visit(browser, 'ipad', language, iosUrl, { javaScriptEnabled: false });
        assert.match((await page.locator('#install-ipad').getAttribute('href')) ?? '', /^itms-services:/);
        await close();
      });

      it('an Android phone gets the APK download, and is told an iOS app will not install', async () => {
        const { page, close } = await visit(browser, 'android', language, androidUrl);
        const button = page.locator('#install');
        assert.equal(await button.textContent(), t.apk);
        assert.equal(await button.getAttribute('href'), `${androidUrl}/download`);
        assert.equal(await page.locator('[data-fact="abis"]').textContent(), 'arm64-v8a, armeabi-v7a');
        await screenshot(page, { path: screenshotPath(language, 'android'), fullPage: true });
        await close();
        const other = await visit(browser, 'android', language, iosUrl);
        assert.equal(await other.page.locator('#install').count(), 0);
        assert.match((await other.page.locator('#wrong-platform').textContent()) ?? '', t.wrongDevice);
        await screenshot(other.page, { path: screenshotPath(language, 'android-visits-ios-app'), fullPage: true });
        await other.close();
      });

      it('a desktop visitor sees the QR code first, and it decodes to the page URL', async () => {
        const { page, close } = await visit(browser, 'desktop', language, iosUrl);
        assert.equal(await page.locator('#install').count(), 0);
        const order = await page.evaluate(() => {
          const qr = document.getElementById('qr');
          const hint = document.querySelector('.hint');
          return qr && hint ? Boolean(qr.compareDocumentPosition(hint) & Node.DOCUMENT_POSITION_FOLLOWING) : null;
        });
        assert.equal(order, true, 'the QR code comes before the hint');
        const shot = await screenshot(page.locator('#qr svg'));
        const png = PNG.sync.read(shot);
        const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
        assert.equal(decoded?.data, iosUrl);
        await screenshot(page, { path: screenshotPath(language, 'desktop'), fullPage: true });
        await close();
      });

      it('WeChat gets an overlay telling the user to open the page in Safari', async () => {
        const { page, close } = await visit(browser, 'wechat', language, iosUrl);
        const overlay = page.locator('#in-app-overlay');
        assert.equal(await overlay.isVisible(), true);
        for (const text of t.overlay) assert.match((await overlay.textContent()) ?? '', text);
        await screenshot(page, { path: screenshotPath(language, 'wechat'), fullPage: false });
        await close();
      });

      it('the language switcher changes the language and keeps it', async () => {
        const other = language === 'en' ? 'zh-CN' : 'en';
        const { page, close } = await visit(browser, 'iphone', language, iosUrl);
        await page.locator(`footer a[hreflang="${other}"]`).click();
        await page.waitForLoadState('load');
        assert.equal(await page.getAttribute('html', 'lang'), other);
        await page.goto(iosUrl);
        assert.equal(await page.getAttribute('html', 'lang'), other, 'remembered without ?lang=');
        await close();
      });
    });
  }
});
