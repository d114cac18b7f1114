// /docs in a real browser: swagger-ui renders every operation of the API from /v1/openapi.json
// under the strict CSP (no violation of script-src), with the response schemas and enums shown.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchChromium } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let browser: Browser;

before(async () => {
  if (browserSkip) return;
  [server, browser] = await Promise.all([startTestServer({ name: 'docs-browser', overrides: { signers: [] } }), launchChromium()]);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

it('renders the operations with swagger-ui, without CSP violations', { skip: browserSkip }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const violations: string[] = [];
  await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => (window as any).reportViolation(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`));
  });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const response = await page.goto(`${server.url}/docs`);
  assert.equal(response?.status(), 200);
  await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  const paths = await page.locator('.opblock-summary-path').allTextContents();
  for (const path of ['/tasks/create', '/tasks/{task_id}/events', '/apps/upload', '/uploads']) assert.ok(paths.some((p) => p.replace(/\u200b/g, '') === path), `${path} in ${paths.length} operations`);
  // The create operation's responses: "OK", not "Default Response".
  await page.locator('#operations-Tasks-post_v1_tasks_create, [id^="operations-Tasks-post"]').first().click();
  await page.locator('.responses-wrapper').first().waitFor();
  const responses = await page.locator('.responses-wrapper').first().textContent();
  assert.doesNotMatch(responses ?? '', /Default Response/);
  assert.match(responses ?? '', /OK/);
  assert.deepEqual(errors, []);
  assert.deepEqual(violations.filter((v) => v.startsWith('script-src')), [], 'no script was blocked');
  console.log(`# /docs: ${paths.length} operations rendered; CSP reports: ${violations.length === 0 ? 'none' : violations.join(', ')}`);
  await context.close();
});
