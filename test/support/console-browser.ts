// The console in chromium for browser tests: Debian's chromium driven by playwright-core, a
// context per language and width, axe-core injected into pages to check accessibility, and
// screenshots written to test-output/console/.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { testOutputDir } from './fixtures.ts';

// Debian's package; .ci/run installs it. CHROMIUM_PATH points elsewhere on other systems.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const skipBrowser: string | false = existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt-get install chromium)`;
if (skipBrowser) console.log(`NOTICE: console browser tests skipped: ${skipBrowser}`);

export const WIDTHS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;
export type Width = keyof typeof WIDTHS;
export type Language = 'en' | 'zh-CN';

export const SHOTS = testOutputDir('console');

export function launch(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A context whose browser language is `language` (the console picks it up on first visit). */
export async function context(browser: Browser, language: Language, width: Width): Promise<BrowserContext> {
  const phone = width === 'phone';
  // bypassCSP: axe-core is injected as an inline script, which the console's CSP (rightly) refuses.
  const ctx = await browser.newContext({ locale: language, viewport: WIDTHS[width], deviceScaleFactor: phone ? 2 : 1, isMobile: phone, hasTouch: phone, bypassCSP: true });
  // `npm test` runs test files side by side on two cores: a full-page screenshot once took longer
  // than playwright's 30 s default while the apksigner oracle ran beside it (alone: a second).
  ctx.setDefaultTimeout(90_000);
  return ctx;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Runs axe-core on the page; fails on any serious or critical violation. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
  assert.deepEqual(violations, [], `${what}: axe-core violations`);
}

/** Waits until the page has settled: no loading skeleton left. */
export async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.locator('.loading').first().waitFor({ state: 'detached', timeout: 10_000 }).catch(() => undefined);
}

export function shotPath(name: string, language: Language, width: Width): string {
  return path.join(SHOTS, `${name}.${language}.${width}.png`);
}
