// The certificate lifecycle in the console, in chromium (English and Chinese): health badges with
// their reasons on certificates and developer accounts' certificates, the rotation flow (dry-run
// preview, then rotate and follow its progress until the link serves the new build), and the
// recent alerts; each page passes axe-core.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { assertAccessible, context, launch, settled, skipBrowser } from '../support/console-browser.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

describe('certificate lifecycle in the console', { skip: skipBrowser }, () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let oldId = '';
  let newId = '';
  let distributionId = '';

  before(async () => {
    server = await startTestServer({ name: 'console-lifecycle', overrides: { signers: [slowCopySigner('android', 300)] } });
    browser = await launch();
    const owner = new ConsoleClient(server.url);
    await owner.setup(server.setupUrl!, 'owner@example.com', 'owner-password-1');
    api = new Api(server.url, server.key);
    const pki = testPki();
    const old = await api.form('/v1/certificates', { kind: 'android', password: 'pw', name: 'Old keystore', file: { name: 'a.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
    oldId = old.body.data.id;
    const fresh = await api.form('/v1/certificates', { kind: 'android', password: 'pw', name: 'New keystore', file: { name: 'b.p12', data: pki.p12(pki.androidEc, { password: 'pw' }) } });
    newId = fresh.body.data.id;
    // An iOS certificate whose profile expires within the week: health "expiring", with the reason.
    await api.form('/v1/certificates', {
      kind: 'ios_enterprise',
      password: 'pw',
      name: 'Enterprise',
      file: { name: 'e.p12', data: pki.p12(pki.leaf, { password: 'pw' }) },
      profile: { name: 'p.mobileprovision', data: pki.mobileprovision({ bundleId: '*', expiresAt: new Date(Date.now() + 5 * 86400_000), name: 'Short profile' }) },
    });
    const upload = (await api.upload('alpha.apk', tinyApk({ label: 'Alpha', packageName: 'com.alpha.app' }))).body.data;
    const task = (await api.post('/v1/tasks/create', { file_key: upload.file_key, cert_type: 'enterprise', certificate_id: oldId })).body.data;
    for (let i = 0; i < 200; i++) {
      const distribution = await api.get(`/v1/tasks/${task.task_id}/distribution`);
      if (distribution.status === 200) {
        distributionId = distribution.body.data.id;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(distributionId, 'the release was published');
    await server.service.lifecycle!.checkAll();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${server.url}/sign-in`);
    await page.locator('input[type=email]').fill('owner@example.com');
    await page.locator('input[type=password]').fill('owner-password-1');
    await page.locator('form button[type=submit]').click();
    await page.waitForURL(/\/apps$/);
  }

  it('shows health badges, previews and runs a rotation, and lists alerts', async () => {
    const ctx = await context(browser, 'en', 'desktop');
    const page = await ctx.newPage();
    await signIn(page);
    await page.goto(`${server.url}/certificates`);
    await settled(page);
    const enterprise = page.getByRole('row').filter({ hasText: 'Enterprise' });
    await enterprise.getByText('Expiring soon').waitFor();
    await enterprise.getByText(/Short profile.*expires on/).waitFor();
    assert.equal(await page.getByRole('row').filter({ hasText: 'Old keystore' }).getByText('Healthy').count(), 1);
    await assertAccessible(page, 'certificates with health');

    await page.getByRole('button', { name: 'Rotate: Old keystore' }).click();
    await page.getByLabel('Replacement certificate').selectOption(newId);
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    const preview = page.getByTestId('rotation-preview');
    await preview.getByText('1 release would be re-signed:').waitFor();
    await preview.getByText('Planned').waitFor();
    assert.equal((await api.get(`/v1/distributions/${distributionId}`)).body.data.task_id !== undefined, true);
    const before = (await api.get(`/v1/distributions/${distributionId}`)).body.data.task_id;
    await assertAccessible(page, 'rotation preview');
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByTestId('rotation-progress').getByText('1 of 1 done, 0 running, 0 failed, 0 skipped').waitFor({ timeout: 60_000 });
    await page.getByText('Rotation finished.').waitFor();
    const after = (await api.get(`/v1/distributions/${distributionId}`)).body.data.task_id;
    assert.notEqual(after, before, 'the link now serves the re-signed release');
    assert.equal((await api.get(`/v1/tasks/${after}`)).body.data.certificate_id, newId);

    await page.getByRole('link', { name: 'Alerts' }).first().click();
    await page.waitForURL(/\/alerts$/);
    await settled(page);
    await page.getByText('Certificate expiring', { exact: true }).first().waitFor({ timeout: 10_000 });
    assert.ok((await page.getByText(/Short profile/).count()) > 0, 'the alert says why');
    await assertAccessible(page, 'alerts');
    await ctx.close();
  });

  it('reads the same in Chinese on a phone', async () => {
    const ctx = await context(browser, 'zh-CN', 'phone');
    const page = await ctx.newPage();
    await signIn(page);
    await page.goto(`${server.url}/certificates`);
    await settled(page);
    await page.getByText('即将到期', { exact: true }).first().waitFor();
    await page.goto(`${server.url}/alerts`);
    await settled(page);
    await page.getByText('证书即将到期', { exact: true }).first().waitFor();
    await assertAccessible(page, 'alerts (zh-CN, phone)');
    await ctx.close();
  });
});
