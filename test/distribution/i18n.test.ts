// The public pages' languages: every catalogue has every key of the English one, with the same
// kind of value, translated (not a copy of the English text); the language a visitor gets
// (?lang=, its cookie, WeChat's Language/ token, Accept-Language); and each page rendered in
// each language declares it in <html lang>.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Html } from '../../src/distribution/html.ts';
import { CATALOGUES, chooseLanguage, formatSize, LANGUAGES, languageOfTag, type Language } from '../../src/distribution/i18n/index.ts';
import { renderHistoryPage } from '../../src/distribution/pages/history-page.ts';
import { renderInstallPage } from '../../src/distribution/pages/install-page.ts';
import { renderMessagePage } from '../../src/distribution/pages/message-page.ts';
import { renderPasswordPage } from '../../src/distribution/pages/password-page.ts';
import { classifyUserAgent } from '../../src/distribution/user-agent.ts';

const en = CATALOGUES.en as Record<string, unknown>;
/** Values that are the same in every language: product and platform names, a technical term. */
const SAME_EVERYWHERE = new Set(['platformIos', 'platformAndroid', 'deviceIphone', 'deviceIpad', 'deviceTv', 'deviceWatch', 'deviceMac', 'deviceVision',
  'inAppQq', 'inAppFacebook', 'inAppInstagram', 'inAppLine', 'factBundleId']);

/** A catalogue entry's text; functions are called with sample arguments (any fit: they only interpolate). */
function sample(fn: (...args: never[]) => unknown): string {
  const value = (fn as unknown as (...a: unknown[]) => unknown)('Ünïcode', 7, new Html('<i>x</i>'));
  return value instanceof Html ? value.value : String(value);
}

describe('message catalogues', () => {
  for (const language of LANGUAGES.filter((l) => l !== 'en')) {
    it(`${language} has exactly the English keys, each translated`, () => {
      const catalogue = CATALOGUES[language] as Record<string, unknown>;
      assert.deepEqual(Object.keys(catalogue).sort(), Object.keys(en).sort());
      for (const [key, english] of Object.entries(en)) {
        const value = catalogue[key];
        assert.equal(typeof value, typeof english, key);
        if (typeof english === 'function') {
          assert.equal((value as (...a: never[]) => unknown).length, english.length, `${key} takes the same parameters`);
          const text = sample(value as (...a: never[]) => unknown);
          assert.ok(text.trim().length > 0, key);
          if (!SAME_EVERYWHERE.has(key)) assert.notEqual(text, sample(english as (...a: never[]) => unknown), `${key} is translated`);
        } else {
          const text = value instanceof Html ? value.value : String(value);
          assert.ok(text.trim().length > 0, key);
          if (!SAME_EVERYWHERE.has(key)) assert.notEqual(text, english instanceof Html ? english.value : String(english), `${key} is translated`);
        }
      }
    });
  }

  it('escapes what it interpolates', () => {
    for (const language of LANGUAGES) {
      const html = CATALOGUES[language].afterInstallTrust('<script>alert(1)</script>', false).value;
      assert.ok(!html.includes('<script>'), language);
      assert.ok(html.includes('&lt;script&gt;'), language);
    }
  });
});

describe('choosing the language', () => {
  const wechat = (token: string) => `Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.47(0x18002f2c) NetType/WIFI Language/${token}`;

  it('maps language tags by script and region', () => {
    const cases: Array<[string, Language | null]> = [
      ['en', 'en'], ['en-GB', 'en'], ['zh', 'zh-CN'], ['zh-CN', 'zh-CN'], ['zh_CN', 'zh-CN'], ['zh-SG', 'zh-CN'], ['zh-Hans-CN', 'zh-CN'],
      ['zh-TW', 'zh-TW'], ['zh_HK', 'zh-TW'], ['zh-MO', 'zh-TW'], ['zh-Hant', 'zh-TW'], ['ZH-hant-HK', 'zh-TW'], ['fr', null], ['', null],
    ];
    for (const [tag, language] of cases) assert.equal(languageOfTag(tag), language, tag);
  });

  it('takes ?lang=, then its cookie, then WeChat, then Accept-Language, then English', () => {
    assert.equal(chooseLanguage({}), 'en');
    assert.equal(chooseLanguage({ acceptLanguage: 'fr-FR, de;q=0.9' }), 'en', 'no supported language: English');
    assert.equal(chooseLanguage({ acceptLanguage: 'fr-FR, zh-CN;q=0.8, en;q=0.5' }), 'zh-CN', 'the best supported one');
    assert.equal(chooseLanguage({ acceptLanguage: 'en;q=0.4, zh-TW;q=0.9' }), 'zh-TW', 'by quality, not order');
    assert.equal(chooseLanguage({ acceptLanguage: 'zh-CN;q=0, en' }), 'en', 'q=0 means "not this one"');
    assert.equal(chooseLanguage({ userAgent: wechat('zh_CN'), acceptLanguage: 'en-US' }), 'zh-CN', "WeChat's own language wins over its Accept-Language");
    assert.equal(chooseLanguage({ userAgent: wechat('en'), acceptLanguage: 'zh-CN' }), 'en');
    assert.equal(chooseLanguage({ userAgent: wechat('zh_TW') }), 'zh-TW');
    assert.equal(chooseLanguage({ userAgent: 'Mozilla/5.0 Language/zh_CN', acceptLanguage: 'en' }), 'en', 'the token counts only in WeChat');
    assert.equal(chooseLanguage({ cookie: 'zh-TW', userAgent: wechat('zh_CN') }), 'zh-TW', 'a remembered choice wins over WeChat');
    assert.equal(chooseLanguage({ query: 'en', cookie: 'zh-TW', userAgent: wechat('zh_CN'), acceptLanguage: 'zh-CN' }), 'en', 'an explicit ?lang= wins');
    assert.equal(chooseLanguage({ query: 'klingon', acceptLanguage: 'zh-CN' }), 'zh-CN', 'an unsupported ?lang= is ignored');
  });

  it('formats sizes in the language', () => {
    assert.equal(formatSize('en', 12_900_000), '12.3 MB');
    assert.equal(formatSize('zh-CN', 2048), '2 KB');
    assert.equal(formatSize('en', 3 * 1024 ** 3), '3.00 GB');
  });
});

describe('every page declares its language', () => {
  const iphone = classifyUserAgent('Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1');
  for (const language of LANGUAGES) {
    it(language, () => {
      const pages = [
        renderInstallPage({
          language, requestUrl: '/d/x', now: new Date('2026-01-01T00:00:00Z'),
          app: { name: 'Demo', version: '1.0', build: '1', bundleId: 'com.example', platform: 'ios', sizeBytes: 1000, releasedAt: new Date('2026-01-01T00:00:00Z'), iconUrl: null },
          requirements: { minimumOs: '15.0', deviceFamilies: ['iphone'], nativeAbis: null }, notes: 'Fixed <b>bugs</b>', downloads: { count: 1, max: 5 },
          expiresAt: new Date('2026-01-04T00:00:00Z'), pageUrl: 'https://s/d/x', qrSvg: '<svg></svg>', installUrl: 'itms-services://x', enterpriseTrust: null,
          historyUrl: '/a/y/history', insecure: false, preview: null,
        }, iphone),
        renderPasswordPage({ language, requestUrl: '/d/x', action: '/d/x', wrongPassword: true }),
        renderMessagePage({ language, requestUrl: '/d/x', title: 'T', message: 'M', app: { name: 'Demo', version: '1.0', iconUrl: null } }),
        renderHistoryPage({ language, requestUrl: '/a/y/history', appName: 'Demo', iconUrl: null, rows: [] }),
      ];
      for (const page of pages) {
        assert.match(page, new RegExp(`<html lang="${language}">`));
        assert.ok(!/<script>|<style>| style="| on[a-z]+="/.test(page), 'no inline script or style: the pages run under a strict CSP');
        assert.match(page, /<link rel="stylesheet" href="\/pages\/page\.[0-9a-f]{12}\.css">/);
      }
      assert.ok(pages[0]!.includes('Fixed &lt;b&gt;bugs&lt;/b&gt;'), 'notes are text, never markup');
    });
  }
});
