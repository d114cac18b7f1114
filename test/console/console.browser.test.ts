// The console as a new user meets it, in chromium: the first run (open / → setup → owner →
// Developer settings → Create API key → the key uploads a package and creates a task through
// the API → the app and the task appear in the console → the install link opens), then every
// page in English and Simplified Chinese at desktop (1280) and phone (390) widths, screenshotted
// into test-output/console/ and checked with axe-core.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { assertAccessible, context, launch, screenshot, settled, shotPath, skipBrowser, WIDTHS, type Language, type Width } from '../support/console-browser.ts';
import { iconIpa } from '../support/distribution.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

const EMAIL = 'owner@example.com';
const PASSWORD = 'owner-password-1';

describe('console in chromium', { skip: skipBrowser }, () => {
  let server: TestServer;
  let browser: Browser;
  let apiKey = '';
  let taskId = '';
  let appId = '';

  before(async () => {
    server = await startTestServer({
      name: 'console-browser',
      env: { SIGNET_SIGN_IN_LIMIT: '500/60s,200/900s' },
      overrides: { signers: [slowCopySigner('ios', 300), slowCopySigner('android', 300)] },
    });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signIn(page: Page, language: Language): Promise<void> {
    await page.goto(`${server.url}/sign-in`);
    await page.getByLabel(language === 'en' ? 'Email' : '邮箱', { exact: true }).fill(EMAIL);
    await page.getByLabel(language === 'en' ? 'Password' : '密码', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: language === 'en' ? 'Sign in' : '登录' }).click();
    await page.waitForURL(/\/apps$/);
  }

  it('walks the first run: setup, owner, API key, upload with it, and the console shows the result', { timeout: 120_000 }, async () => {
    const ctx = await context(browser, 'en', 'desktop');
    const page = await ctx.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForURL(/\/setup$/);
    // The view shows "Loading…" until the server has answered whether a token is needed: wait
    // for the text rather than reading it at once (it raced on a fast machine).
    const main = page.locator('main');
    await main.filter({ hasText: /setup link/i }).waitFor({ timeout: 15_000 }).catch(() => undefined);
    assert.match(await main.innerText(), /setup link/i, 'without the token the page says where the link is');

    // Screenshots of the setup form in both languages and widths, before it is used.
    for (const language of ['en', 'zh-CN'] as const) {
      for (const width of ['desktop', 'phone'] as const) {
        const c = await context(browser, language, width);
        const p = await c.newPage();
        await p.goto(server.setupUrl!);
        await p.getByLabel(language === 'en' ? 'Email' : '邮箱', { exact: true }).waitFor();
        await assertAccessible(p, `setup ${language} ${width}`);
        await screenshot(p, { path: shotPath('setup', language, width), fullPage: true });
        await c.close();
      }
    }

    await page.goto(server.setupUrl!);
    await page.getByLabel('Email', { exact: true }).fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.waitForURL(/\/apps$/);
    await page.getByText('No apps yet').waitFor();

    await page.getByRole('link', { name: 'Developer settings' }).click();
    await page.waitForURL(/\/settings\/developer$/);
    await page.getByLabel('Label').fill('ci pipeline');
    await page.getByRole('checkbox', { name: /certificates:write/ }).check();
    await page.getByRole('button', { name: 'Create API key' }).click();
    const field = page.getByLabel('API key', { exact: true });
    await field.waitFor();
    assert.equal(await field.getAttribute('readonly'), '', 'the key is in a read-only field');
    apiKey = await field.inputValue();
    assert.match(apiKey, /^sk_[0-9A-Za-z]{43}$/);
    await page.getByRole('cell', { name: /ci pipeline/ }).first().waitFor();

    // The pipeline's side: the key uploads certificates and packages and creates tasks.
    const api = new Api(server.url, apiKey);
    const pki = testPki();
    const ios = await api.form('/v1/certificates', {
      kind: 'ios_enterprise',
      password: 'pw',
      name: 'Enterprise 2026',
      file: { name: 'enterprise.p12', data: pki.p12(pki.leaf, { password: 'pw', includeChain: true }) },
      profile: { name: 'enterprise.mobileprovision', data: pki.mobileprovision({ bundleId: '*' }) },
    });
    assert.equal(ios.status, 200, JSON.stringify(ios.body));
    const android = await api.form('/v1/certificates', { kind: 'android', password: 'pw', name: 'Release keystore', file: { name: 'release.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
    assert.equal(android.status, 200, JSON.stringify(android.body));
    const upload = await api.upload('Demo.ipa', iconIpa());
    assert.equal(upload.status, 200, JSON.stringify(upload.body));
    appId = upload.body.data.app_id;
    const created = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    taskId = created.body.data.task_id;
    const apk = await api.upload('droid.apk', tinyApk({ label: 'Droid Demo' }));
    await api.post('/v1/tasks/create', { file_key: apk.body.data.file_key, cert_type: 'enterprise' });

    // The console shows the task (its status is polled) and the app.
    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.locator('tr', { hasText: taskId }).getByText('Succeeded').waitFor({ timeout: 30_000 });
    await page.getByRole('link', { name: 'Apps', exact: true }).click();
    await page.getByRole('link', { name: /Installer Demo/ }).click();
    await page.waitForURL(new RegExp(`/apps/${appId}$`));
    await page.getByRole('heading', { name: 'Installer Demo' }).waitFor();
    await page.getByRole('link', { name: taskId }).click();
    const open = page.getByRole('link', { name: 'Open install link' });
    await open.waitFor();
    const href = await open.getAttribute('href');
    assert.match(href ?? '', /\/d\/[0-9A-Za-z]{26}$/);
    const install = await page.goto(href!);
    assert.equal(install?.status(), 200);
    assert.match(await page.content(), /Installer Demo/);
    await ctx.close();
  });

  it('shows every page in both languages at desktop and phone widths, with no serious axe violation', { timeout: 400_000 }, async () => {
    assert.ok(taskId, 'the first-run walk ran');
    const owner = new ConsoleClient(server.url);
    await owner.signIn(EMAIL, PASSWORD);
    const invite = await owner.post('/v1/invitations', { email: 'new@example.com', role: 'viewer' });
    const devInvite = await owner.post('/v1/invitations', { email: 'tester@example.com', role: 'developer' });
    await new ConsoleClient(server.url).accept(devInvite.body.data.url, 'tester-password-1');
    await owner.post('/v1/invitations', { email: 'designer@example.com', role: 'developer' });
    const tester = (await owner.get('/v1/members')).body.data.items.find((m: any) => m.email === 'tester@example.com');
    const reset = (await owner.post(`/v1/members/${tester.user_id}/password-reset`)).body.data.url;
    // Some downloads for the chart, and a protected link with a quota.
    const link = (await new Api(server.url, apiKey).get(`/v1/tasks/${taskId}/distribution`)).body.data;
    for (let i = 0; i < 3; i += 1) await (await fetch(link.download_url)).arrayBuffer();
    await owner.request('PATCH', `/v1/distributions/${link.id}`, { json: { password: 'testers-only', max_downloads: 200 } });

    const relative = (url: string) => new URL(url).pathname + new URL(url).search;
    const publicPages: Array<[string, string]> = [
      ['sign-in', '/sign-in'],
      ['invite', relative(invite.body.data.url)],
      ['reset-password', relative(reset)],
    ];
    const pages: Array<[string, string]> = [
      ['apps', '/apps'],
      ['app', `/apps/${appId}`],
      ['upload', '/upload'],
      ['tasks', '/tasks'],
      ['task', `/tasks/${taskId}`],
      ['certificates', '/certificates'],
      ['developer-accounts', '/developer-accounts'],
      ['links', '/links'],
      ['developer-settings', '/settings/developer'],
      ['members', '/members'],
      ['profile', '/profile'],
    ];
    for (const language of ['en', 'zh-CN'] as const) {
      for (const width of Object.keys(WIDTHS) as Width[]) {
        const ctx = await context(browser, language, width);
        const page = await ctx.newPage();
        for (const [name, path] of publicPages) {
          await page.goto(`${server.url}${path}`);
          await settled(page);
          await assertAccessible(page, `${name} ${language} ${width}`);
          await screenshot(page, { path: shotPath(name, language, width), fullPage: true });
        }
        await signIn(page, language);
        assert.equal(await page.evaluate(() => document.documentElement.lang), language, 'the language follows the browser');
        for (const [name, path] of pages) {
          await page.goto(`${server.url}${path}`);
          await settled(page);
          if (name === 'links') await page.locator('td.actions button[aria-expanded]').first().click();
          await assertAccessible(page, `${name} ${language} ${width}`);
          await screenshot(page, { path: shotPath(name, language, width), fullPage: true });
        }
        await ctx.close();
      }
    }
  });

  it('switches language and remembers it', async () => {
    const ctx = await context(browser, 'en', 'desktop');
    const page = await ctx.newPage();
    await page.goto(`${server.url}/sign-in`);
    await page.getByLabel('Language').first().selectOption('zh-CN');
    await page.getByLabel('邮箱', { exact: true }).waitFor();
    await page.reload();
    await page.getByLabel('密码', { exact: true }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN');
    await ctx.close();
  });

  it('is operable from the keyboard: sign in and reach Create API key without a mouse', async () => {
    const ctx = await context(browser, 'en', 'desktop');
    const page = await ctx.newPage();
    await page.goto(`${server.url}/sign-in`);
    await page.getByLabel('Email', { exact: true }).focus();
    await page.keyboard.type(EMAIL);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/apps$/);
    await page.goto(`${server.url}/settings/developer`);
    await settled(page);
    let reached = false;
    for (let i = 0; i < 60 && !reached; i += 1) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate(() => document.activeElement?.textContent?.trim())) === 'Create API key';
    }
    assert.ok(reached, 'Tab reaches the Create API key button');
    await page.keyboard.press('Enter');
    await page.getByLabel('API key', { exact: true }).waitFor();
    await ctx.close();
  });
});
