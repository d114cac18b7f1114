// Chromium for page tests: Debian's package driven by playwright-core, the visitors the install
// pages adapt to (iPhone, iPad in desktop mode, Android, desktop, WeChat) in a language, and a
// screenshot folder under test-output/.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, errors, type Browser, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import { testOutputDir } from './fixtures.ts';

// Debian's package; .ci/run installs it. CHROMIUM_PATH points elsewhere on other systems.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserSkip: string | false = existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt-get install chromium)`;
if (browserSkip) console.log(`NOTICE: browser tests skipped: ${browserSkip}`);

export type Device = 'iphone' | 'ipad' | 'android' | 'desktop' | 'wechat';
export type PageLanguage = 'en' | 'zh-CN' | 'zh-TW';

const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

export function deviceOptions(device: Device, language: PageLanguage): BrowserContextOptions {
  const locale = { locale: language };
  switch (device) {
    case 'iphone':
      return { ...locale, userAgent: IPHONE_UA, viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
    // iPadOS Safari presents itself as a Mac by default; only touch support tells them apart.
    case 'ipad':
      return { ...locale, userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', viewport: { width: 820, height: 1180 }, hasTouch: true };
    case 'android':
      return { ...locale, userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36', viewport: { width: 412, height: 915 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
    case 'desktop':
      return { ...locale, userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', viewport: { width: 1280, height: 900 } };
    // WeChat says its own language in the user agent, whatever Accept-Language says.
    case 'wechat':
      return {
        ...locale,
        userAgent: `Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.47(0x18002f2c) NetType/WIFI Language/${language.replace('-', '_')}`,
        viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
      };
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Opens `url` as `device` in `language`; `close` ends the browser context. */
export async function visit(browser: Browser, device: Device, language: PageLanguage, url: string, options: BrowserContextOptions = {}): Promise<{ page: Page; status: number | undefined; close: () => Promise<void> }> {
  const context = await browser.newContext({ ...deviceOptions(device, language), ...options });
  const page = await context.newPage();
  const response = await page.goto(url);
  // Pages load their stylesheet and icon: wait for them before looking.
  await page.waitForLoadState('load');
  return { page, status: response?.status(), close: () => context.close() };
}

/** test-output/distribution/screenshots/<language>/<name>.png */
export function screenshotPath(language: PageLanguage, name: string): string {
  const dir = testOutputDir('distribution', 'screenshots', language);
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}

const SHOT_TRIES = 3;
const SHOT_TIMEOUT_MS = 20_000;

/**
 * Takes a screenshot of a page or an element, trying again when chromium's capture stalls. In
 * `npm test` a full-page capture once hung for 90 s after "fonts loaded" while the same shots take
 * 0.1-0.2 s each, alone or beside three busy loops on the two cores: a stall, not slowness, so a
 * longer wait does not help and a new request does. The last try reloads the page first.
 */
export async function screenshot(target: Page | Locator, options: Parameters<Page['screenshot']>[0] = {}): Promise<Buffer> {
  const page = 'goBack' in target ? target : target.page();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await target.screenshot({ ...options, timeout: SHOT_TIMEOUT_MS });
    } catch (error) {
      if (!(error instanceof errors.TimeoutError) || attempt === SHOT_TRIES) throw error;
      console.log(`NOTICE: screenshot of ${page.url()} stalled for ${SHOT_TIMEOUT_MS / 1000} s; try ${attempt + 1} of ${SHOT_TRIES}`);
      await page.bringToFront();
      if (attempt + 1 === SHOT_TRIES) await page.reload({ waitUntil: 'load' });
    }
  }
}
