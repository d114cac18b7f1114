// The pages around the install page, in chromium and in both languages: expired, download limit
// reached and password-protected links, an iPhone whose iOS is too old, the version history, and
// apps whose icon exists only in Assets.car (a generated catalog, and the public DemoApp when
// ../shared/fixtures has it). Screenshots land in test-output/distribution/screenshots/<language>/.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { renderInstallPage } from '../../src/distribution/pages/install-page.ts';
import { classifyUserAgent } from '../../src/distribution/user-agent.ts';
import { browserSkip, deviceOptions, launchChromium, screenshot, screenshotPath, visit, type PageLanguage } from '../support/browser.ts';
import { catalogOnlyDemoApp, generatedCatalogIpa } from '../support/catalog-apps.ts';
import { distributionFixture, iconIpa, type DistributionFixture } from '../support/distribution.ts';
import { needsSharedFixtures } from '../support/fixtures.ts';

const TEXT = {
  en: { expired: 'Link expired', exhausted: 'Download limit reached', password: 'Password required', wrong: 'That password is not correct.', tooOld: /needs iOS 18\.0 or later/, available: 'Available' },
  'zh-CN': { expired: '链接已过期', exhausted: '已达下载上限', password: '需要密码', wrong: '密码不正确。', tooOld: /此应用需要 iOS 18\.0 或更高版本/, available: '可安装' },
} as const;

const NOTES = {
  en: 'Offline maps for the field team.\n- Sync resumes after a dropped connection\n- Faster search\n\nKnown issue: <script>alert(1)</script> is shown as text.',
  'zh-CN': '新增离线地图，方便外勤团队使用。\n- 断网后自动继续同步\n- 搜索更快\n\n已知问题：<script>alert(1)</script> 会按原文显示。',
} as const;

function notesPage(language: 'en' | 'zh-CN'): string {
  return renderInstallPage({
    language, requestUrl: '/notes-preview', now: new Date('2026-05-01T00:00:00Z'),
    app: { name: 'Field Notes', version: '2.1', build: '210', bundleId: 'com.example.states', platform: 'ios', sizeBytes: 48_300_000, releasedAt: new Date('2026-04-30T08:00:00Z'), iconUrl: null },
    requirements: { minimumOs: '16.0', deviceFamilies: ['iphone', 'ipad'], nativeAbis: null }, notes: NOTES[language],
    downloads: { count: 12, max: 100 }, expiresAt: new Date('2026-05-31T00:00:00Z'), pageUrl: 'https://signet.example/d/x', qrSvg: '<svg viewBox="0 0 1 1"></svg>',
    installUrl: 'itms-services://?action=download-manifest&url=https%3A%2F%2Fsignet.example%2Fd%2Fx%2Fmanifest.plist', enterpriseTrust: null, historyUrl: null, insecure: false, preview: null,
  }, classifyUserAgent(deviceOptions('iphone', language).userAgent));
}

const OLD_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 16_7_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1';

describe('install page states in chromium', { skip: browserSkip }, () => {
  let fx: DistributionFixture;
  let browser: Browser;
  const links: Record<string, { task: any; distribution: any }> = {};

  before(async () => {
    fx = await distributionFixture('browser-states');
    const bundleId = 'com.example.states';
    links.expired = await fx.release('States.ipa', iconIpa({ bundleId, name: 'Field Notes', version: '1.0', build: '100' }));
    links.exhausted = await fx.release('States.ipa', iconIpa({ bundleId, name: 'Field Notes', version: '1.1', build: '110' }));
    links.password = await fx.release('States.ipa', iconIpa({ bundleId, name: 'Field Notes', version: '1.2', build: '120' }));
    links.newest = await fx.release('States.ipa', iconIpa({ bundleId, name: 'Field Notes', version: '2.0', build: '200', minimumOs: '18.0' }));
    await fx.configure(links.expired.distribution.id, { expires_at: new Date(Date.now() - 3_600_000).toISOString() });
    await fx.configure(links.exhausted.distribution.id, { max_downloads: 1 });
    assert.equal((await fetch(links.exhausted.distribution.download_url)).status, 200);
    await fx.configure(links.password.distribution.id, { password: 'field-test' });
    links.catalog = await fx.release('Catalog.ipa', generatedCatalogIpa({ name: 'Catalog Icon' }));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  for (const language of ['en', 'zh-CN'] as const satisfies readonly PageLanguage[]) {
    const t = TEXT[language];
    describe(language, () => {
      it('an expired link says so and still names the app', async () => {
        const { page, status, close } = await visit(browser, 'iphone', language, links.expired!.distribution.url);
        assert.equal(status, 410);
        assert.equal(await page.locator('#app-name').textContent(), 'Field Notes');
        assert.equal(await page.locator('#status').textContent(), t.expired);
        assert.ok((await page.locator('img.icon').evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0);
        await screenshot(page, { path: screenshotPath(language, 'expired'), fullPage: true });
        await close();
        const desktop = await visit(browser, 'desktop', language, links.expired!.distribution.url);
        await screenshot(desktop.page, { path: screenshotPath(language, 'expired-desktop'), fullPage: true });
        await desktop.close();
      });

      it('an exhausted link says so and still names the app', async () => {
        const { page, status, close } = await visit(browser, 'android', language, links.exhausted!.distribution.url);
        assert.equal(status, 410);
        assert.equal(await page.locator('#status').textContent(), t.exhausted);
        assert.equal(await page.locator('#app-name').textContent(), 'Field Notes');
        await screenshot(page, { path: screenshotPath(language, 'exhausted'), fullPage: true });
        await close();
      });

      it('a password-protected link asks first, names nothing, and opens with the password', async () => {
        const { page, status, close } = await visit(browser, 'iphone', language, links.password!.distribution.url);
        assert.equal(status, 401);
        assert.equal(await page.locator('h1').textContent(), t.password);
        assert.ok(!(await page.content()).includes('Field Notes'));
        await screenshot(page, { path: screenshotPath(language, 'password'), fullPage: true });
        await page.fill('#password', 'wrong');
        await page.click('button[type="submit"]');
        await page.waitForLoadState('load');
        assert.equal(await page.locator('#password-error').textContent(), t.wrong);
        await screenshot(page, { path: screenshotPath(language, 'password-wrong'), fullPage: true });
        await page.fill('#password', 'field-test');
        await page.click('button[type="submit"]');
        await page.waitForLoadState('load');
        assert.equal(await page.locator('#app-name').textContent(), 'Field Notes');
        assert.match((await page.locator('#install').getAttribute('href')) ?? '', /^itms-services:.*%3Ft%3D/);
        await close();
      });

      it('an iPhone whose iOS is too old is told so before the install button', async () => {
        const { page, close } = await visit(browser, 'iphone', language, links.newest!.distribution.url, { userAgent: OLD_IPHONE });
        const warning = page.locator('#os-too-old');
        assert.match((await warning.textContent()) ?? '', t.tooOld);
        const above = await page.evaluate(() => {
          const w = document.getElementById('os-too-old')!.getBoundingClientRect();
          const b = document.getElementById('install')!.getBoundingClientRect();
          return w.bottom <= b.top;
        });
        assert.equal(above, true);
        await screenshot(page, { path: screenshotPath(language, 'ios-too-old'), fullPage: true });
        await close();
      });

      it('the history lists each release with its state', async () => {
        const { page, close } = await visit(browser, 'desktop', language, `${links.newest!.distribution.app_url}/history`);
        const states = await page.locator('tbody tr[data-state]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
        assert.deepEqual(states, ['available', 'password', 'exhausted', 'expired']);
        assert.equal(await page.locator('tbody tr').first().locator('.state').textContent(), t.available);
        await screenshot(page, { path: screenshotPath(language, 'history'), fullPage: true });
        await close();
      });

      it('release notes read well', async () => {
        // Tasks carry notes once #14 stores them; until then the page is rendered here and served
        // from the test server's origin, so it loads Signet's stylesheet as a real page does.
        const context = await browser.newContext(deviceOptions('iphone', language));
        const page = await context.newPage();
        const url = `${fx.server.url}/notes-preview`;
        await page.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: notesPage(language) }));
        await page.goto(url);
        await page.waitForLoadState('load');
        const notes = page.locator('.notes');
        assert.equal(await notes.locator('p').count(), 2, 'paragraphs split at blank lines');
        assert.match((await notes.textContent()) ?? '', /<script>alert\(1\)<\/script>/, 'markup in notes is shown as text');
        await screenshot(notes, { path: screenshotPath(language, 'release-notes') });
        await context.close();
      });

      it('an app whose icon is only in a generated Assets.car shows it', async () => {
        const { page, close } = await visit(browser, 'iphone', language, links.catalog!.distribution.url);
        const size = await page.locator('img.icon').evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]);
        assert.deepEqual(size, [180, 180]);
        await screenshot(page, { path: screenshotPath(language, 'catalog-icon-generated'), fullPage: false });
        await close();
      });
    });
  }

  it('a Traditional Chinese visitor gets the page in Traditional Chinese', async () => {
    const { page, close } = await visit(browser, 'iphone', 'zh-TW', links.newest!.distribution.url);
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-TW');
    assert.equal(await page.locator('#install').textContent(), '安裝');
    await screenshot(page, { path: screenshotPath('zh-TW', 'iphone'), fullPage: true });
    await close();
  });

  describe('the public DemoApp, its icon only in Assets.car', needsSharedFixtures('ios/assets-car'), () => {
    it('shows its real icon on the install page', async () => {
      const { distribution } = await fx.release('DemoApp.ipa', await catalogOnlyDemoApp());
      for (const language of ['en', 'zh-CN'] as const) {
        const { page, close } = await visit(browser, 'iphone', language, distribution.url);
        const size = await page.locator('img.icon').evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]);
        assert.deepEqual(size, [1024, 1024]);
        await screenshot(page, { path: screenshotPath(language, 'catalog-icon-demoapp'), fullPage: false });
        await close();
      }
    });
  });
});
