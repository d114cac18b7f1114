// Honest download counts: a download counts once, when a GET starts at byte 0. HEAD requests,
// Range continuations and link-preview agents never count; previews get an Open Graph page
// instead of the package. A client whose counted download started may finish it with Range
// after the quota filled; nobody else may, and a stale If-Range makes a new download.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { distributionFixture, iconIpa, tinyApk, type DistributionFixture } from '../support/distribution.ts';

let fx: DistributionFixture;
before(async () => {
  fx = await distributionFixture('counting');
});
after(() => fx?.close());

const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(url, { method, headers: { 'user-agent': ANDROID, ...headers }, redirect: 'manual' });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function downloads(distributionId: string): Promise<number> {
  return (await fx.api.get(`/v1/distributions/${distributionId}`)).body.data.downloads;
}

describe('what counts as a download', () => {
  let link: { task: any; distribution: any };
  before(async () => {
    link = await fx.release('count.apk', tinyApk({ packageName: 'com.example.count', label: 'Counted' }));
  });

  it('HEAD answers like GET without counting or reading the package', async () => {
    for (let i = 0; i < 3; i++) {
      const head = await get(link.distribution.download_url, {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(Number(head.headers.get('content-length')), link.task.artifact.size);
      assert.equal(head.headers.get('accept-ranges'), 'bytes');
      assert.equal(head.bytes.length, 0);
    }
    assert.equal(await downloads(link.distribution.id), 0, '`curl -I` twice no longer counts two downloads');
  });

  it('a download counts once however it is fetched in ranges', async () => {
    const whole = await get(link.distribution.download_url);
    assert.equal(whole.status, 200);
    assert.equal(await downloads(link.distribution.id), 1);
    // A chunked client: the first range starts the download, the others continue it.
    const size = link.task.artifact.size as number;
    const parts: Buffer[] = [];
    for (let start = 0; start < size; start += 100) {
      const part = await get(link.distribution.download_url, { range: `bytes=${start}-${Math.min(start + 99, size - 1)}` });
      assert.equal(part.status, 206);
      parts.push(part.bytes);
    }
    assert.equal(sha256(Buffer.concat(parts)), link.task.artifact.sha256);
    assert.equal(await downloads(link.distribution.id), 2, 'the chunked download counted once, at its first byte');
  });

  for (const [agent, ua] of [
    ['Slack', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'],
    ['Telegram', 'TelegramBot (like TwitterBot)'],
    ['Discord', 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)'],
    ['Facebook', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
    ['iMessage', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0'],
    ['WhatsApp', 'WhatsApp/2.23.20.0 A'],
    ['LinkedIn', 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)'],
    ['DingTalk', 'DingTalkBot-LinkService/1.0'],
  ] as const) {
    it(`a link preview by ${agent} gets an Open Graph card, never the package, and is not counted`, async () => {
      const before = await downloads(link.distribution.id);
      for (const url of [link.distribution.download_url, link.distribution.url]) {
        const preview = await get(url, { 'user-agent': ua });
        assert.equal(preview.status, 200);
        assert.match(preview.headers.get('content-type') ?? '', /^text\/html/);
        const html = preview.bytes.toString();
        assert.match(html, /<meta property="og:title" content="Counted">/);
        assert.match(html, /<meta property="og:description" content="Version 1\.2\.3 \(7\) · Android · \d+ KB">/);
        assert.ok(!html.includes('id="install"'), 'no install button for a bot');
      }
      assert.equal(await downloads(link.distribution.id), before);
    });
  }

  it('a browser prefetch (Sec-Purpose: prefetch) is not counted either', async () => {
    const before = await downloads(link.distribution.id);
    const prefetch = await get(link.distribution.download_url, { 'sec-purpose': 'prefetch' });
    assert.match(prefetch.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(await downloads(link.distribution.id), before);
  });
});

describe('the quota', () => {
  it('lets a download that started before the quota filled finish, and nobody else continue', async () => {
    const { task, distribution } = await fx.release('quota.apk', tinyApk({ packageName: 'com.example.quota' }));
    await fx.configure(distribution.id, { max_downloads: 1 });
    const size = task.artifact.size as number;
    const tester = { 'user-agent': ANDROID };
    // The tester's download starts (and fills the quota), then the connection drops.
    const first = await get(distribution.download_url, { ...tester, range: 'bytes=0-99' });
    assert.equal(first.status, 206);
    assert.equal(await downloads(distribution.id), 1);
    // A new download is refused now.
    const other = await get(distribution.download_url, { 'user-agent': 'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36' });
    assert.equal(other.status, 410);
    assert.equal(other.headers.get('signet-error'), 'download_quota_exceeded');
    assert.equal((await get(distribution.download_url, tester)).status, 410, 'starting over is a new download');
    // The tester resumes where the download stopped (with the ETag, as browsers do) and finishes it.
    const rest = await get(distribution.download_url, { ...tester, range: 'bytes=100-', 'if-range': first.headers.get('etag')! });
    assert.equal(rest.status, 206);
    assert.equal(sha256(Buffer.concat([first.bytes, rest.bytes])), task.artifact.sha256);
    // Another client cannot continue a download it never started.
    const stranger = await get(distribution.download_url, { 'user-agent': 'curl/8.5.0', range: 'bytes=100-' });
    assert.equal(stranger.status, 410);
    // A stale If-Range would be answered with the whole file: that is a new download, refused.
    const stale = await get(distribution.download_url, { ...tester, range: 'bytes=100-', 'if-range': '"0000"' });
    assert.equal(stale.status, 410);
    assert.equal(await downloads(distribution.id), 1, 'the finished download counted once');
    // The page of the exhausted link still names the app.
    const page = await get(distribution.url);
    assert.equal(page.status, 410);
    assert.match(page.bytes.toString(), /<h1 id="app-name">Signet Example<\/h1>/);
  });

  it('an iOS link counts the package download, not the manifest', async () => {
    const { distribution } = await fx.release('Count.ipa', iconIpa({ bundleId: 'com.example.countios' }));
    const iphone = { 'user-agent': 'com.apple.appstored/1.0 iOS/17.4 model/iPhone15,2 hwp/t8120 build/21E219 (6; dt:281) AMS/1' };
    for (let i = 0; i < 3; i++) assert.equal((await get(distribution.manifest_url, iphone)).status, 200);
    assert.equal(await downloads(distribution.id), 0);
    assert.equal((await get(distribution.download_url, iphone)).status, 200);
    assert.equal(await downloads(distribution.id), 1);
  });
});
