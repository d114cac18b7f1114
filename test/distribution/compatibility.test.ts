// What a user agent says about the visitor's OS, and whether a release fits: only definite
// mismatches are reported (reduced or frozen user agents get no warning).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { androidVersionOfLevel, compareVersions, compatibility } from '../../src/distribution/compatibility.ts';
import { isLinkPreview } from '../../src/distribution/link-preview.ts';
import { classifyUserAgent } from '../../src/distribution/user-agent.ts';
import { BufferSource } from '../../src/signing/data-source.ts';
import { inspectPackage } from '../../src/signing/inspect/index.ts';
import { tinyApk } from '../support/app-packages.ts';

const UA = {
  iphone: (os: string, safari = '17.4') => `Mozilla/5.0 (iPhone; CPU iPhone OS ${os} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${safari} Mobile/15E148 Safari/604.1`,
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.1 Mobile/15E148 Safari/604.1',
  ipadDesktop: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  android: (version: string) => `Mozilla/5.0 (Linux; Android ${version}; SM-A515F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36`,
  reducedAndroid: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
};

describe('the OS a user agent states', () => {
  it('reads iOS and Android versions', () => {
    assert.deepEqual(classifyUserAgent(UA.iphone('17_4_1')).os, { name: 'ios', version: '17.4.1' });
    assert.deepEqual(classifyUserAgent(UA.iphone('15_0')).os, { name: 'ios', version: '15.0' });
    assert.deepEqual(classifyUserAgent(UA.ipad).os, { name: 'ios', version: '16.1' });
    assert.deepEqual(classifyUserAgent(UA.android('13')).os, { name: 'android', version: '13' });
    assert.deepEqual(classifyUserAgent(UA.android('7.1.1')).os, { name: 'android', version: '7.1.1' });
  });

  it('knows when a user agent hides the version', () => {
    assert.equal(classifyUserAgent(UA.reducedAndroid).os, null, "Chrome's reduced user agent always says Android 10");
    assert.equal(classifyUserAgent(UA.ipadDesktop).os, null, 'an iPad in desktop mode says it is a Mac');
    // Safari 26 freezes the OS token at 18_6; its Version/ says the release.
    assert.deepEqual(classifyUserAgent(UA.iphone('18_6', '26.1')).os, { name: 'ios', version: '26.1' });
    assert.equal(classifyUserAgent(UA.iphone('18_6', '26.1')).iosMajor, 26);
  });
});

describe('whether a release fits the device', () => {
  const ios = (minimumOs: string | null, deviceFamilies: string[] | null = ['iphone', 'ipad']) => ({ minimumOs, deviceFamilies, nativeAbis: null });
  const android = (level: string | null) => ({ minimumOs: level, deviceFamilies: null, nativeAbis: [] });

  it('compares versions numerically', () => {
    assert.ok(compareVersions('16.7.2', '17.0') < 0);
    assert.equal(compareVersions('15', '15.0'), 0);
    assert.ok(compareVersions('17.10', '17.9') > 0);
  });

  it('warns an iPhone whose iOS is older than the minimum, and nobody else', () => {
    assert.deepEqual(compatibility('ios', ios('17.2'), classifyUserAgent(UA.iphone('16_7_2'))), { kind: 'os-too-old', platform: 'ios', minimum: '17.2', current: '16.7.2' });
    assert.deepEqual(compatibility('ios', ios('17.2'), classifyUserAgent(UA.iphone('17_2'))), { kind: 'ok' });
    assert.deepEqual(compatibility('ios', ios(null), classifyUserAgent(UA.iphone('12_0'))), { kind: 'ok' }, 'no minimum recorded');
    assert.deepEqual(compatibility('ios', ios('26.0'), classifyUserAgent(UA.iphone('18_6', '26.0'))), { kind: 'ok' }, 'not fooled by the frozen token');
    assert.deepEqual(compatibility('ios', ios('17.0'), classifyUserAgent(UA.ipadDesktop)), { kind: 'ok' });
  });

  it('tells an iPhone about an iPad-only app, but not an iPad about an iPhone app (it runs scaled)', () => {
    assert.deepEqual(compatibility('ios', ios(null, ['ipad']), classifyUserAgent(UA.iphone('17_4'))), { kind: 'ipad-only' });
    assert.deepEqual(compatibility('ios', ios(null, ['iphone']), classifyUserAgent(UA.ipad)), { kind: 'ok' });
  });

  it('compares Android releases with API levels', () => {
    assert.equal(androidVersionOfLevel(24), '7.0');
    assert.equal(androidVersionOfLevel(32), '12L');
    assert.equal(androidVersionOfLevel(99), null);
    assert.deepEqual(compatibility('android', android('26'), classifyUserAgent(UA.android('7.1.1'))), { kind: 'os-too-old', platform: 'android', minimum: '8.0', current: '7.1.1' });
    assert.deepEqual(compatibility('android', android('26'), classifyUserAgent(UA.android('8.0.0'))), { kind: 'ok' });
    assert.deepEqual(compatibility('android', android('32'), classifyUserAgent(UA.android('12'))), { kind: 'ok' }, '"12" may be 12L');
    assert.deepEqual(compatibility('android', android('34'), classifyUserAgent(UA.reducedAndroid)), { kind: 'ok' });
  });
});

describe('link-preview agents', () => {
  it('are told apart from people, in-app browsers included', () => {
    for (const ua of ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'TelegramBot (like TwitterBot)', 'Twitterbot/1.0', 'WhatsApp/2.23.20.0 A', 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)', 'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5', 'DingTalkBot-LinkService/1.0']) {
      assert.equal(isLinkPreview({ userAgent: ua }), true, ua);
    }
    for (const ua of [UA.iphone('17_4'), UA.android('14'), `${UA.iphone('17_4')} MicroMessenger/8.0.47(0x18002f2c) NetType/WIFI Language/zh_CN`, 'curl/8.5.0']) {
      assert.equal(isLinkPreview({ userAgent: ua }), false, ua);
    }
    assert.equal(isLinkPreview({ userAgent: UA.iphone('17_4'), purpose: 'prefetch' }), true);
  });
});

it('inspectPackage lists an APK\'s native ABIs', async () => {
  const info = await inspectPackage(new BufferSource(tinyApk({ abis: ['x86_64', 'armeabi-v7a', 'arm64-v8a'] })));
  assert.equal(info.platform, 'android');
  assert.deepEqual(info.platform === 'android' && info.nativeAbis, ['arm64-v8a', 'armeabi-v7a', 'x86_64']);
  const none = await inspectPackage(new BufferSource(tinyApk()));
  assert.deepEqual(none.platform === 'android' && none.nativeAbis, []);
});
