// Install links over a real listening server: records, manifest, download, icon, QR, password,
// expiry, quota, disable, concurrent counting, permanent app link and history, tenant isolation.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { parsePlist, plistToJs } from '../../src/signing/plist/index.ts';
import { Api } from '../support/api-client.ts';
import { distributionFixture, iconIpa, ICON_SIZE, tinyApk, type DistributionFixture } from '../support/distribution.ts';

let fx: DistributionFixture;
let ios: { task: any; distribution: any };
let android: { task: any; distribution: any };

before(async () => {
  fx = await distributionFixture('install-links');
  ios = await fx.release('Demo.ipa', iconIpa());
  android = await fx.release('demo.apk', tinyApk({ packageName: 'com.example.droid', versionName: '4.5.6', label: 'Droid Demo' }));
});
after(() => fx?.close());

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const path = (url: string) => new URL(url).pathname + new URL(url).search;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function fetchBytes(url: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: Buffer; headers: Headers }> {
  const response = await fetch(url, { headers, redirect: 'manual' });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), headers: response.headers };
}

describe('distribution records', () => {
  it('a succeeded iOS task has an install link with an itms-services URL', () => {
    const d = ios.distribution;
    assert.match(d.id, /^dst_/);
    assert.match(d.url, /\/d\/[0-9A-Za-z]{26}$/, 'slug of at least 128 bits');
    assert.equal(d.download_url, `${d.url}/download`);
    assert.equal(d.manifest_url, `${d.url}/manifest.plist`);
    assert.equal(d.itms_services_url, `itms-services://?action=download-manifest&url=${encodeURIComponent(d.manifest_url)}`);
    assert.equal(d.qr_code_url, `${d.url}/qr.svg`);
    assert.deepEqual([d.password_protected, d.max_downloads, d.downloads, d.enabled, d.expires_at], [false, null, 0, true, null]);
    assert.deepEqual(d.requirements, { minimum_os: '15.0', device_families: ['iphone', 'ipad'], native_abis: null });
    assert.match(d.app_url, /\/a\/[0-9A-Za-z]{26}$/);
  });

  it('an Android link has no iOS fields', () => {
    assert.equal(android.distribution.manifest_url, null);
    assert.equal(android.distribution.itms_services_url, null);
    assert.deepEqual(android.distribution.requirements, { minimum_os: '24', device_families: null, native_abis: [] });
  });

  it('is readable by id', async () => {
    const own = await fx.api.get(`/v1/distributions/${ios.distribution.id}`);
    assert.equal(own.status, 200);
    assert.equal(own.body.data.url, ios.distribution.url);
  });
});

describe('manifest and download', () => {
  it('the manifest parses as a plist naming the signed app, and its package URL serves the artifact', async () => {
    const response = await fetchBytes(ios.distribution.manifest_url);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/xml/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const manifest = plistToJs(parsePlist(response.bytes).value) as any;
    const item = manifest.items[0];
    assert.equal(item.metadata['bundle-identifier'], ios.task.app.bundle_id);
    assert.equal(item.metadata['bundle-identifier'], 'com.example.installer');
    assert.equal(item.metadata['bundle-version'], ios.task.app.version);
    assert.equal(item.metadata.kind, 'software');
    assert.equal(item.metadata.title, 'Installer Demo');
    const pkg = item.assets.find((a: any) => a.kind === 'software-package');
    const ipa = await fetchBytes(pkg.url);
    assert.equal(ipa.status, 200);
    assert.equal(sha256(ipa.bytes), ios.task.artifact.sha256);
    assert.equal(pkg.sha256, ios.task.artifact.sha256);
    assert.equal(ipa.headers.get('content-type'), 'application/octet-stream');
  });

  it('an APK downloads with the Android content type, length and Range support', async () => {
    const whole = await fetchBytes(android.distribution.download_url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'application/vnd.android.package-archive');
    assert.equal(Number(whole.headers.get('content-length')), android.task.artifact.size);
    assert.match(whole.headers.get('content-disposition') ?? '', /attachment; filename="Droid-Demo-4\.5\.6\.apk"/);
    const part = await fetchBytes(android.distribution.download_url, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.deepEqual(part.bytes, whole.bytes.subarray(10, 20));
    const after = (await fx.api.get(`/v1/distributions/${android.distribution.id}`)).body.data;
    assert.equal(after.downloads, 1, 'a resumed (ranged) download is not counted again');
    assert.equal(after.downloads_by_day[0].downloads, 1);
    assert.equal(after.downloads_by_day[0].day, new Date().toISOString().slice(0, 10));
  });

  it('serves the CgBI icon as a PNG that a standard decoder reads', async () => {
    const icon = await fetchBytes(`${ios.distribution.url}/icon.png`);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get('content-type'), 'image/png');
    const png = PNG.sync.read(icon.bytes);
    assert.deepEqual([png.width, png.height], [ICON_SIZE, ICON_SIZE]);
    assert.deepEqual([...png.data.subarray(0, 4)], [0x10, 0x60, 0xd0, 0xff]);
  });

  it('serves the QR code as SVG and PNG', async () => {
    const svg = await fetchBytes(ios.distribution.qr_code_url);
    assert.equal(svg.headers.get('content-type'), 'image/svg+xml');
    assert.match(svg.bytes.toString(), /^<svg /);
    const png = await fetchBytes(ios.distribution.qr_code_url.replace(/svg$/, 'png'));
    assert.equal(PNG.sync.read(png.bytes).width, 512);
  });
});

describe('the install page', () => {
  it('is small, has a language, alt texts and an install link that works without JavaScript', async () => {
    const page = await fetchBytes(ios.distribution.url, { 'user-agent': IPHONE });
    assert.equal(page.status, 200);
    const html = page.bytes.toString();
    assert.ok(page.bytes.length < 100 * 1024, `page weighs ${page.bytes.length} bytes`);
    assert.match(html, /<html lang="en">/);
    assert.match(html, /<img class="icon" src="\/d\/[0-9A-Za-z]+\/icon\.png" alt="Installer Demo app icon"/);
    assert.ok(html.includes(`href="${ios.distribution.itms_services_url.replace(/&/g, '&amp;')}"`), 'itms-services link');
    assert.match(html, /VPN &amp; Device Management/, 'enterprise trust guidance');
    assert.match(html, /Signet Test Inc/, 'names the developer to trust');
  });

  it('unknown slugs get a clear 404 page', async () => {
    const page = await fetchBytes(`${fx.server.url}/d/${'x'.repeat(26)}`);
    assert.equal(page.status, 404);
    assert.equal(page.headers.get('signet-error'), 'distribution_not_found');
    assert.match(page.bytes.toString(), /Link not found/);
  });
});

describe('link settings', () => {
  let target: { task: any; distribution: any };
  before(async () => {
    target = await fx.release('demo.apk', tinyApk({ packageName: 'com.example.settings', versionName: '1.0' }));
  });
  const patch = (body: unknown) => fx.api.request('PATCH', `/v1/distributions/${target.distribution.id}`, { json: body });

  it('a password protects the page, the manifest and the download', async () => {
    assert.equal((await patch({ password: 'open sesame' })).body.data.password_protected, true);
    const page = await fetchBytes(target.distribution.url);
    assert.equal(page.status, 401);
    assert.equal(page.headers.get('signet-error'), 'password_required');
    assert.match(page.bytes.toString(), /<label for="password">Password<\/label>/);
    const download = await fetchBytes(target.distribution.download_url);
    assert.deepEqual([download.status, download.headers.get('signet-error')], [401, 'password_required']);

    const wrong = await fetch(target.distribution.url, { method: 'POST', body: new URLSearchParams({ password: 'nope' }), redirect: 'manual' });
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /not correct/);
    const right = await fetch(target.distribution.url, { method: 'POST', body: new URLSearchParams({ password: 'open sesame' }), redirect: 'manual' });
    assert.equal(right.status, 303);
    const cookie = right.headers.get('set-cookie')!.split(';')[0]!;
    const unlocked = await fetchBytes(target.distribution.url, { cookie });
    assert.equal(unlocked.status, 200);
    const link = /href="([^"]*\/download\?t=[^"]+)"/.exec(unlocked.bytes.toString())?.[1];
    assert.ok(link, 'the download link carries an access token');
    assert.equal((await fetchBytes(new URL(link.replace(/&amp;/g, '&'), fx.server.url).href)).status, 200);
    await patch({ password: null });
    assert.equal((await fetchBytes(target.distribution.url)).status, 200);
  });

  it('an expired link answers 410 with a clear page', async () => {
    await patch({ expires_at: new Date(Date.now() - 1000).toISOString() });
    const page = await fetchBytes(target.distribution.url);
    assert.equal(page.status, 410);
    assert.equal(page.headers.get('signet-error'), 'link_expired');
    assert.match(page.bytes.toString(), /Link expired/);
    assert.equal((await fetchBytes(target.distribution.download_url)).status, 410);
    await patch({ expires_at: null });
    assert.equal((await fetchBytes(target.distribution.url)).status, 200);
  });

  it('a disabled link answers 410 until it is enabled again', async () => {
    await patch({ enabled: false });
    const page = await fetchBytes(target.distribution.url);
    assert.equal(page.status, 410);
    assert.equal(page.headers.get('signet-error'), 'link_disabled');
    assert.match(page.bytes.toString(), /Link disabled/);
    await patch({ enabled: true });
    assert.equal((await fetchBytes(target.distribution.url)).status, 200);
  });

  it('the download quota is enforced and counted exactly under 50 concurrent downloads', async () => {
    const before = (await fx.api.get(`/v1/distributions/${target.distribution.id}`)).body.data.downloads;
    await patch({ max_downloads: before + 30 });
    const results = await Promise.all(Array.from({ length: 50 }, () => fetchBytes(target.distribution.download_url)));
    const ok = results.filter((r) => r.status === 200);
    assert.equal(ok.length, 30);
    assert.equal(results.filter((r) => r.status === 410).length, 20);
    for (const r of ok) assert.equal(sha256(r.bytes), target.task.artifact.sha256);
    const after = (await fx.api.get(`/v1/distributions/${target.distribution.id}`)).body.data;
    assert.equal(after.downloads, before + 30);
    const page = await fetchBytes(target.distribution.url);
    assert.equal(page.status, 410);
    assert.equal(page.headers.get('signet-error'), 'download_quota_exceeded');
    assert.match(page.bytes.toString(), /Download limit reached/);
    await patch({ max_downloads: null });
  });

  it('rejects invalid settings and unknown links', async () => {
    assert.equal((await patch({})).status, 400);
    assert.equal((await patch({ max_downloads: 0 })).status, 400);
    assert.equal((await patch({ password: '' })).status, 400);
    assert.equal((await patch({ expires_at: 'tomorrow' })).status, 400);
    const missing = await fx.api.request('PATCH', '/v1/distributions/dst_unknown', { json: { enabled: false } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'distribution_not_found');
  });

  it("another account's key sees 404 for every distribution route", async () => {
    const keyOut = await fx.server.service.db.repos.apiKeys.create({ accountId: (await fx.server.service.db.repos.accounts.ensure('intruder')).id });
    const intruder = new Api(fx.server.url, keyOut.key);
    assert.equal((await intruder.get(`/v1/distributions/${target.distribution.id}`)).status, 404);
    assert.equal((await intruder.get(`/v1/tasks/${target.task.task_id}/distribution`)).status, 404);
    assert.equal((await intruder.request('PATCH', `/v1/distributions/${target.distribution.id}`, { json: { enabled: false } })).status, 404);
  });
});

describe('permanent app link', () => {
  it('serves the newest release and lists every version', async () => {
    const first = await fx.release('Demo.ipa', iconIpa({ bundleId: 'com.example.versions', version: '1.0', build: '100' }));
    const second = await fx.release('Demo.ipa', iconIpa({ bundleId: 'com.example.versions', version: '2.0', build: '200' }));
    assert.equal(first.distribution.app_url, second.distribution.app_url);
    const page = (await fetchBytes(second.distribution.app_url, { 'user-agent': IPHONE })).bytes.toString();
    const slugOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    assert.ok(page.includes(slugOf(second.distribution.url)), 'the page is the newest release');
    assert.ok(!page.includes(slugOf(first.distribution.url)), 'not the older one');
    const history = (await fetchBytes(`${second.distribution.app_url}/history`)).bytes.toString();
    const newer = history.indexOf('>2.0</a>');
    const older = history.indexOf('>1.0</a>');
    assert.ok(newer > 0 && older > newer, 'both versions listed, newest first');
    assert.ok(history.includes(path(first.distribution.url)));
  });
});
