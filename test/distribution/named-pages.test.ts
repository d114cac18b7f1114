// Pages that name the app: links that stopped working (expired, disabled, download limit reached)
// still show the app's icon and name unless they are password protected; the permanent link
// serves the newest release that can be installed; the history lists each release once with its
// true state; link previews show name, icon and version of open links only. Plus what a page
// tells a tester: languages, requirements, and a warning when their OS is too old.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { parsePlist, plistToJs } from '../../src/signing/plist/index.ts';
import { distributionFixture, iconIpa, tinyApk, type DistributionFixture } from '../support/distribution.ts';

let fx: DistributionFixture;
before(async () => {
  fx = await distributionFixture('named-pages');
});
after(() => fx?.close());

const IPHONE = (version = '17_4') => `Mozilla/5.0 (iPhone; CPU iPhone OS ${version} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1`;
const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers: { 'user-agent': IPHONE(), ...headers }, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}
const slugOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe('links that stopped working', () => {
  for (const [state, settings, code, title] of [
    ['expired', { expires_at: new Date(Date.now() - 60_000).toISOString() }, 'link_expired', 'Link expired'],
    ['disabled', { enabled: false }, 'link_disabled', 'Link disabled'],
  ] as const) {
    it(`${state} links name their app with icon and version`, async () => {
      const { distribution } = await fx.release('Named.ipa', iconIpa({ bundleId: `com.example.${state}`, name: 'Named App', version: '5.1' }));
      await fx.configure(distribution.id, settings);
      const page = await get(distribution.url);
      assert.equal(page.status, 410);
      assert.equal(page.headers.get('signet-error'), code);
      assert.match(page.text, /<h1 id="app-name">Named App<\/h1>/);
      assert.match(page.text, /<p class="subtitle">Version 5\.1<\/p>/);
      assert.match(page.text, new RegExp(`<img class="icon" src="/d/${slugOf(distribution.url)}/icon\\.png"`));
      assert.match(page.text, new RegExp(`<p class="status" id="status">${title}</p>`));
      assert.ok(!page.text.includes('id="install"'));
      assert.equal((await fetch(`${distribution.url}/icon.png`)).status, 200, 'and the icon it shows is served');
    });
  }

  it('a protected link that stopped working names nothing', async () => {
    const { distribution } = await fx.release('Secret.ipa', iconIpa({ bundleId: 'com.example.secret', name: 'Secret App' }));
    await fx.configure(distribution.id, { password: 'hunter2', expires_at: new Date(Date.now() - 60_000).toISOString() });
    const page = await get(distribution.url);
    assert.equal(page.status, 410);
    assert.match(page.text, /<h1 id="title">Link expired<\/h1>/);
    assert.ok(!page.text.includes('Secret App'));
    assert.ok(!page.text.includes('icon.png'));
  });
});

describe('password-protected links', () => {
  let link: { task: any; distribution: any };
  before(async () => {
    link = await fx.release('Locked.ipa', iconIpa({ bundleId: 'com.example.locked', name: 'Locked App' }));
    await fx.configure(link.distribution.id, { password: 'open sesame' });
  });

  it('the password page, the icon and the link preview reveal no app', async () => {
    const page = await get(link.distribution.url);
    assert.equal(page.status, 401);
    assert.ok(!page.text.includes('Locked App'));
    assert.equal((await fetch(`${link.distribution.url}/icon.png`)).status, 401);
    const preview = await get(link.distribution.url, { 'user-agent': SLACK });
    assert.equal(preview.status, 200);
    assert.match(preview.text, /<meta property="og:title" content="Password-protected install link">/);
    assert.ok(!preview.text.includes('Locked App') && !preview.text.includes('og:image'));
  });

  it('once unlocked, the page icon and the manifest icon carry the access token', async () => {
    const unlock = await fetch(link.distribution.url, { method: 'POST', body: new URLSearchParams({ password: 'open sesame' }), redirect: 'manual' });
    const cookie = unlock.headers.get('set-cookie')!.split(';')[0]!;
    const page = await get(link.distribution.url, { cookie });
    assert.equal(page.status, 200);
    const icon = /<img class="icon" src="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    assert.match(icon, /\/icon\.png\?t=/);
    assert.equal((await fetch(new URL(icon, fx.server.url))).status, 200);
    const manifestUrl = /href="itms-services:\/\/\?action=download-manifest&amp;url=([^"]+)"/.exec(page.text)![1]!;
    const manifest = plistToJs(parsePlist(Buffer.from(await (await fetch(decodeURIComponent(manifestUrl))).arrayBuffer())).value) as any;
    const display = manifest.items[0].assets.find((a: any) => a.kind === 'display-image').url;
    assert.match(display, /\/icon\.png\?t=/);
    const png = PNG.sync.read(Buffer.from(await (await fetch(display)).arrayBuffer()));
    assert.equal(png.width, 120, 'iOS can fetch the icon without cookies');
  });
});

describe('the permanent link and the history', () => {
  it('falls back to the newest release that can be installed, and names the app when none can', async () => {
    const first = await fx.release('Perm.ipa', iconIpa({ bundleId: 'com.example.permanent', name: 'Permanent', version: '1.0', build: '10' }));
    const second = await fx.release('Perm.ipa', iconIpa({ bundleId: 'com.example.permanent', name: 'Permanent', version: '2.0', build: '20' }));
    await fx.configure(second.distribution.id, { max_downloads: 1 });
    assert.equal((await fetch(second.distribution.download_url)).status, 200);
    const page = await get(second.distribution.app_url);
    assert.equal(page.status, 200, 'not "Download limit reached"');
    assert.ok(page.text.includes(slugOf(first.distribution.url)), 'the older release that is still available');
    await fx.configure(first.distribution.id, { enabled: false });
    const none = await get(second.distribution.app_url);
    assert.equal(none.status, 410);
    assert.equal(none.headers.get('signet-error'), 'download_quota_exceeded', 'the newest release says why');
    assert.match(none.text, /<h1 id="app-name">Permanent<\/h1>/);
  });

  it('lists each release once, with its true state', async () => {
    const bundleId = 'com.example.history';
    const fileKey = await fx.upload('History.ipa', iconIpa({ bundleId, name: 'History', version: '1.1', build: '11' }));
    const twice = [await fx.publish(fileKey), await fx.publish(fileKey)]; // two tasks from one upload
    const open = await fx.release('History.ipa', iconIpa({ bundleId, name: 'History', version: '1.2', build: '12' }));
    const locked = await fx.release('History.ipa', iconIpa({ bundleId, name: 'History', version: '1.3', build: '13' }));
    const expired = await fx.release('History.ipa', iconIpa({ bundleId, name: 'History', version: '1.4', build: '14' }));
    const disabled = await fx.release('History.ipa', iconIpa({ bundleId, name: 'History', version: '1.5', build: '15' }));
    const exhausted = await fx.release('History.ipa', iconIpa({ bundleId, name: 'History', version: '1.6', build: '16' }));
    await fx.configure(locked.distribution.id, { password: 'pw' });
    await fx.configure(expired.distribution.id, { expires_at: new Date(Date.now() - 1000).toISOString() });
    await fx.configure(disabled.distribution.id, { enabled: false });
    await fx.configure(exhausted.distribution.id, { max_downloads: 1 });
    await fetch(exhausted.distribution.download_url);
    const history = await get(`${open.distribution.app_url}/history`);
    assert.equal(history.status, 200);
    const rows = [...history.text.matchAll(/<tr data-state="([a-z]+)"><td>(?:<a href="([^"]+)">)?([^<]+)/g)].map((m) => ({ state: m[1], href: m[2] ?? null, version: m[3] }));
    assert.deepEqual(rows.map((r) => [r.version, r.state]), [['1.6', 'exhausted'], ['1.5', 'disabled'], ['1.4', 'expired'], ['1.3', 'password'], ['1.2', 'available'], ['1.1', 'available']]);
    assert.equal(rows.find((r) => r.version === '1.1')!.href, `/d/${slugOf(twice[1]!.distribution.url)}`, 'the newest link of that release');
    assert.equal(rows.find((r) => r.version === '1.3')!.href, `/d/${slugOf(locked.distribution.url)}`, 'a protected release links to its password page');
    assert.equal(rows.find((r) => r.version === '1.4')!.href, null, 'an expired one does not link');
    assert.match(history.text, /Password protected/);
    assert.match(history.text, /<img class="icon"/);
  });
});

describe('what the page tells a tester', () => {
  it('is in the language the visitor asks for, and remembers a chosen one', async () => {
    const { distribution } = await fx.release('Lang.ipa', iconIpa({ bundleId: 'com.example.lang', name: 'Lang' }));
    const zh = await get(distribution.url, { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' });
    assert.match(zh.text, /<html lang="zh-CN">/);
    assert.match(zh.text, />安装</);
    const wechat = await get(distribution.url, { 'user-agent': `${IPHONE()} MicroMessenger/8.0.47(0x18002f2c) NetType/WIFI Language/zh_TW`, 'accept-language': 'en' });
    assert.match(wechat.text, /<html lang="zh-TW">/);
    assert.match(wechat.text, /請在 Safari 中開啟/);
    const chosen = await get(`${distribution.url}?lang=en`, { 'accept-language': 'zh-CN' });
    assert.match(chosen.text, /<html lang="en">/);
    const cookie = chosen.headers.get('set-cookie')!.split(';')[0]!;
    assert.equal(cookie, 'signet_lang=en');
    const later = await get(`${distribution.app_url}/history`, { 'accept-language': 'zh-CN', cookie });
    assert.match(later.text, /<html lang="en">/, 'the choice holds on the next page');
    assert.match(zh.headers.get('vary') ?? '', /Accept-Language/);
    const notFound = await get(`${fx.server.url}/d/${'x'.repeat(26)}`, { 'accept-language': 'zh-CN' });
    assert.equal(notFound.status, 404);
    assert.match(notFound.text, /链接不存在/);
    const registration = await get(`${distribution.url}/udid.mobileconfig`, { 'accept-language': 'zh-TW' });
    assert.equal(registration.status, 404, 'an enterprise link registers no devices');
    assert.match(registration.text, /<html lang="zh-TW">/);
    assert.match(registration.text, /裝置註冊失敗/);
    assert.match(registration.text, /此安裝連結不提供裝置註冊/);
  });

  it('shows requirements, devices, downloads and expiry, and warns an iPhone whose iOS is too old before the button', async () => {
    const { distribution } = await fx.release('Needs.ipa', iconIpa({ bundleId: 'com.example.needs', name: 'Needs', minimumOs: '17.2', deviceFamily: [1, 2] }));
    await fx.configure(distribution.id, { max_downloads: 50, expires_at: '2099-06-01T12:00:00Z' });
    const fresh = await get(distribution.url, { 'user-agent': IPHONE('17_4') });
    assert.match(fresh.text, /<dd data-fact="requires">iOS 17\.2 or later<\/dd>/);
    assert.match(fresh.text, /<dd data-fact="devices">iPhone, iPad<\/dd>/);
    assert.match(fresh.text, /<dd data-fact="downloads">0 of 50<\/dd>/);
    assert.match(fresh.text, /<dd data-fact="expires">Jun 1, 2099, 12:00 UTC<span class="relative">in [\d,]+ days<\/span><\/dd>/);
    assert.ok(!fresh.text.includes('id="os-too-old"'));
    const old = await get(distribution.url, { 'user-agent': IPHONE('16_7_2') });
    const warning = old.text.indexOf('id="os-too-old"');
    assert.ok(warning > 0 && warning < old.text.indexOf('id="install"'), 'the warning comes before the install button');
    assert.match(old.text, /needs <strong>iOS 17\.2<\/strong> or later, and this device runs iOS 16\.7\.2/);
    const zh = await get(distribution.url, { 'user-agent': IPHONE('16_7_2'), 'accept-language': 'zh-CN' });
    assert.match(zh.text, /此应用需要 <strong>iOS 17\.2<\/strong> 或更高版本/);
  });

  it('tells an iPhone an iPad-only app cannot be installed on it', async () => {
    const { distribution } = await fx.release('Pad.ipa', iconIpa({ bundleId: 'com.example.pad', name: 'Pad', deviceFamily: [2] }));
    const page = await get(distribution.url);
    assert.match(page.text, /id="wrong-device"/);
    assert.ok(!page.text.includes('id="install"'));
  });

  it('shows an APK\'s minimum Android and native ABIs, and warns an old Android', async () => {
    const { distribution } = await fx.release('abi.apk', tinyApk({ packageName: 'com.example.abi', minSdk: 26, abis: ['x86_64', 'arm64-v8a'] }));
    const android = (version: string) => `Mozilla/5.0 (Linux; Android ${version}; Pixel 3) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 Mobile Safari/537.36`;
    const page = await get(distribution.url, { 'user-agent': android('14') });
    assert.match(page.text, /<dd data-fact="requires">Android 8\.0 or later \(API 26\)<\/dd>/);
    assert.match(page.text, /<dd data-fact="abis">arm64-v8a, x86_64<\/dd>/);
    assert.ok(!page.text.includes('os-too-old'));
    assert.match((await get(distribution.url, { 'user-agent': android('7.1.1') })).text, /id="os-too-old"/);
    // Chrome's reduced user agent always claims Android 10: no warning on a made-up version.
    assert.ok(!(await get(distribution.url, { 'user-agent': 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36' })).text.includes('os-too-old'));
  });

  it('loads its stylesheet and script from content-hashed static files, cached for good', async () => {
    const { distribution } = await fx.release('Static.ipa', iconIpa({ bundleId: 'com.example.static' }));
    const page = await get(distribution.url, { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' });
    const css = /<link rel="stylesheet" href="(\/pages\/page\.[0-9a-f]{12}\.css)">/.exec(page.text)?.[1];
    const js = /<script src="(\/pages\/page\.[0-9a-f]{12}\.js)" defer><\/script>/.exec(page.text)?.[1];
    assert.ok(css && js, 'an iPad in desktop mode gets the script too');
    for (const [path, type] of [[css, /^text\/css/], [js, /^text\/javascript/]] as const) {
      const response = await fetch(new URL(path, fx.server.url));
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', type);
      assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    }
    assert.equal((await fetch(new URL('/pages/page.000000000000.css', fx.server.url))).status, 404);
    assert.ok(!(await get(distribution.url)).text.includes('<script'), 'an iPhone page needs no script at all');
  });

  it('carries an Open Graph card naming the app, its icon and version', async () => {
    const { distribution } = await fx.release('Card.ipa', iconIpa({ bundleId: 'com.example.card', name: 'Card App', version: '9.9', build: '99' }));
    const page = await get(distribution.url, { 'user-agent': SLACK });
    assert.match(page.text, /<meta property="og:title" content="Card App">/);
    assert.match(page.text, /<meta property="og:description" content="Version 9\.9 \(99\) · iOS · \d+ KB">/);
    assert.ok(page.text.includes(`<meta property="og:image" content="${distribution.url}/icon.png">`), 'an absolute icon URL');
  });
});
