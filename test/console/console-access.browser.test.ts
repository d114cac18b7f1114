// What the console refuses, in chromium: a viewer cannot create keys or upload (the page says so
// and the API refuses the same calls); a member of team B sees none of team A's apps, tasks,
// certificates or keys; a request without the CSRF token is refused; an expired session sends
// the user back to sign-in; repeated wrong passwords are throttled.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { UserService } from '../../src/services/users.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { context, launch, screenshot, settled, shotPath, skipBrowser } from '../support/console-browser.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

describe('console access in chromium', { skip: skipBrowser }, () => {
  let server: TestServer;
  let browser: Browser;
  let ownerKeyId = '';

  before(async () => {
    server = await startTestServer({ name: 'console-access', env: { SIGNET_SIGN_IN_LIMIT: '40/60s,4/900s' }, overrides: { signers: [slowCopySigner('android', 0)] } });
    browser = await launch();
    const owner = new ConsoleClient(server.url);
    await owner.setup(server.setupUrl!, 'owner@example.com', 'owner-password-1');
    const key = await owner.createKey(['upload', 'tasks:read', 'tasks:write', 'certificates:write'], 'team A pipeline');
    ownerKeyId = (await owner.get('/v1/api-keys')).body.data.items[0].id;
    const api = new Api(server.url, key);
    const pki = testPki();
    await api.form('/v1/certificates', { kind: 'android', password: 'pw', name: 'Team A keystore', file: { name: 'a.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
    const upload = (await api.upload('alpha.apk', tinyApk({ label: 'Alpha Secret', packageName: 'com.alpha.secret' }))).body.data;
    await api.post('/v1/tasks/create', { file_key: upload.file_key, cert_type: 'enterprise' });
    const invite = await owner.post('/v1/invitations', { email: 'viewer@example.com', role: 'viewer' });
    await new ConsoleClient(server.url).accept(invite.body.data.url, 'viewer-password-1');
    await new UserService({ db: server.service.db, baseUrl: () => server.url }).createInAccount({ email: 'bravo@example.com', password: 'bravo-password-1', accountName: 'bravo', role: 'owner' });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signIn(page: Page, email: string, password: string): Promise<void> {
    await page.goto(`${server.url}/sign-in`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('refuses a viewer keys and uploads, in the page and in the API', async () => {
    const ctx = await context(browser, 'en', 'desktop');
    const page = await ctx.newPage();
    await signIn(page, 'viewer@example.com', 'viewer-password-1');
    await page.waitForURL(/\/apps$/);
    await page.getByText('Alpha Secret').first().waitFor();
    assert.equal(await page.getByRole('link', { name: 'Upload', exact: true }).count(), 1, 'the nav still lists Upload');
    assert.equal(await page.locator('main').getByRole('link', { name: 'Upload' }).count(), 0, 'but the page offers no upload button');
    await page.goto(`${server.url}/settings/developer`);
    await settled(page);
    assert.equal(await page.getByRole('button', { name: 'Create API key' }).count(), 0);
    await page.getByText('Your role does not allow this.').waitFor();
    await page.goto(`${server.url}/upload`);
    await settled(page);
    assert.equal(await page.getByRole('button', { name: 'Upload and sign' }).isDisabled(), true);
    await screenshot(page, { path: shotPath('viewer-upload', 'en', 'desktop'), fullPage: true });
    // The API refuses the same calls made with the viewer's own session and CSRF token.
    const refused = await page.evaluate(async () => {
      const session = await (await fetch('/v1/session')).json();
      const headers = { 'content-type': 'application/json', 'x-csrf-token': session.data.csrf_token };
      const key = await fetch('/v1/api-keys', { method: 'POST', headers, body: JSON.stringify({ scopes: ['tasks:read'] }) });
      const form = new FormData();
      form.append('file', new Blob(['PK']), 'x.apk');
      const upload = await fetch('/v1/apps/upload', { method: 'POST', headers: { 'x-csrf-token': session.data.csrf_token }, body: form });
      return [key.status, (await key.json()).error, upload.status, (await upload.json()).error];
    });
    assert.deepEqual(refused, [403, 'insufficient_scope', 403, 'insufficient_scope']);
    await ctx.close();
  });

  it("shows a member of team B nothing of team A's apps, tasks, certificates or keys", async () => {
    const ctx = await context(browser, 'en', 'desktop');
    const page = await ctx.newPage();
    await signIn(page, 'bravo@example.com', 'bravo-password-1');
    await page.waitForURL(/\/apps$/);
    await page.getByText('No apps yet').waitFor();
    for (const [path, empty] of [['/tasks', 'No tasks yet'], ['/certificates', 'No certificates yet'], ['/links', 'No install links yet']] as const) {
      await page.goto(`${server.url}${path}`);
      await page.getByText(empty).waitFor();
    }
    await page.goto(`${server.url}/settings/developer`);
    await page.getByText('No API keys yet.').waitFor();
    const body = await page.locator('body').innerText();
    assert.doesNotMatch(body, /Alpha Secret|Team A keystore|team A pipeline/);
    const foreign = await page.evaluate(async (id) => {
      const session = await (await fetch('/v1/session')).json();
      const r = await fetch(`/v1/api-keys/${id}`, { method: 'DELETE', headers: { 'x-csrf-token': session.data.csrf_token } });
      return [r.status, (await r.json()).error];
    }, ownerKeyId);
    assert.deepEqual(foreign, [404, 'api_key_not_found']);
    await ctx.close();
  });

  it('refuses a state change without the CSRF token, and sends an expired session back to sign-in', async () => {
    const ctx = await context(browser, 'en', 'desktop');
    const page = await ctx.newPage();
    await signIn(page, 'owner@example.com', 'owner-password-1');
    await page.waitForURL(/\/apps$/);
    const forged = await page.evaluate(async () => {
      const r = await fetch('/v1/api-keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['upload'] }) });
      return [r.status, (await r.json()).error];
    });
    assert.deepEqual(forged, [403, 'csrf_token_invalid']);
    const cookies = await ctx.cookies();
    const session = cookies.find((c) => c.name === 'signet_session');
    assert.ok(session?.httpOnly, 'the session cookie is HttpOnly');
    assert.equal(session?.sameSite, 'Lax');
    assert.equal(await page.evaluate(() => document.cookie.includes('signet_session')), false, 'scripts cannot read it');

    await server.service.db.kysely.updateTable('sessions').set({ last_seen_at: new Date(Date.now() - 48 * 3600_000).toISOString() }).where('revoked_at', 'is', null).execute();
    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.waitForURL(/\/sign-in\?/);
    await page.getByText('Your session has expired. Sign in again.').waitFor();
    await screenshot(page, { path: shotPath('session-expired', 'en', 'desktop'), fullPage: true });
    await ctx.close();
  });

  it('throttles repeated sign-in attempts', async () => {
    const ctx = await context(browser, 'zh-CN', 'phone');
    const page = await ctx.newPage();
    await page.goto(`${server.url}/sign-in`);
    for (let i = 0; i < 5; i += 1) {
      await page.getByLabel('邮箱', { exact: true }).fill('owner@example.com');
      await page.getByLabel('密码', { exact: true }).fill(`wrong-password-${i}`);
      await page.getByRole('button', { name: '登录' }).click();
      await page.getByRole('alert').waitFor();
    }
    await page.getByText('尝试次数过多，请几分钟后再试。').waitFor();
    await screenshot(page, { path: shotPath('sign-in-throttled', 'zh-CN', 'phone'), fullPage: true });
    await ctx.close();
  });
});
