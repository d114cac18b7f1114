// The console in chromium for browser tests: Debian's chromium driven by playwright-core, a
// context per language and width, axe-core injected into pages to check accessibility, and
// screenshots written to test-output/console/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSkip, launchChromium } from './browser.ts';
import { testOutputDir } from './fixtures.ts';

export { screenshot } from './browser.ts';
export const skipBrowser = browserSkip;

export const WIDTHS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;
export type Width = keyof typeof WIDTHS;
export type Language = 'en' | 'zh-CN';

export const SHOTS = testOutputDir('console');

export function launch(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return launchChromium();
}

/** A context whose browser language is `language` (the console picks it up on first visit). */
export async function context(browser: Browser, language: Language, width: Width): Promise<BrowserContext> {
  const phone = width === 'phone';
  // bypassCSP: axe-core is injected as an inline script, which the console's CSP (rightly) refuses.
  const ctx = await browser.newContext({ locale: language, viewport: WIDTHS[width], deviceScaleFactor: phone ? 2 : 1, isMobile: phone, hasTouch: phone, bypassCSP: true });
  // `npm test` runs test files side by side on two cores, so waits get room beyond playwright's 30 s
  // default; screenshots bound their own wait and try again (`screenshot`, browser.ts).
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
