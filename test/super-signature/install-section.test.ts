// The super-signature part of the install page in the visitor's language: register, progress
// (which refreshes the page without a script), the device's install button, and failures.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EnrollmentStatus } from '../../src/super-signature/enrollment.ts';
import { renderSuperSection } from '../../src/super-signature/install-section.ts';
import { classifyUserAgent } from '../../src/distribution/user-agent.ts';

const visitor = classifyUserAgent('Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1');
const status = (state: string, extra: Record<string, unknown> = {}) =>
  ({ enrollment: { id: 'enr_1', state, error_code: null, ...extra }, build: state === 'ready' ? { state: 'ready' } : null }) as unknown as EnrollmentStatus;
const section = (language: 'en' | 'zh-CN' | 'zh-TW', s: EnrollmentStatus | null, manifestUrl: string | null = null) =>
  renderSuperSection({ language, pagePath: '/d/abc', manifestUrl, status: s, visitor });

describe('super signature section', () => {
  it('asks to register the device, in the visitor’s language', () => {
    const zh = section('zh-CN', null);
    assert.match(zh.body.value, /<a class="button" id="register" href="\/d\/abc\/udid\.mobileconfig">注册此设备<\/a>/);
    assert.equal(zh.refresh, null);
    assert.match(section('zh-TW', null).body.value, /註冊此裝置/);
  });

  it('shows progress and refreshes the page without a script', () => {
    for (const state of ['awaiting_device', 'queued', 'registering', 'signing']) {
      const s = section('en', status(state));
      assert.deepEqual(s.refresh, { url: '/d/abc?enrollment=enr_1', seconds: 3 });
      assert.ok(!s.body.value.includes('<script'));
      assert.match(s.body.value, new RegExp(`data-state="${state}"`));
    }
    assert.match(section('zh-CN', status('signing')).body.value, /正在为此设备构建应用/);
  });

  it('offers the device its own build, and explains failures', () => {
    const ready = section('zh-CN', status('ready'), 'https://s/d/abc/manifest.plist?enrollment=enr_1');
    assert.match(ready.body.value, /href="itms-services:\/\/\?action=download-manifest&amp;url=https%3A%2F%2Fs%2Fd%2Fabc%2Fmanifest\.plist%3Fenrollment%3Denr_1">安装<\/a>/);
    assert.equal(ready.refresh, null);
    const failed = section('zh-CN', status('failed', { error_code: 'device_slots_exhausted' }));
    assert.match(failed.body.value, /没有可用的设备名额/);
    assert.match(section('en', status('failed', { error_code: 'something_new' })).body.value, /Something went wrong/);
  });
});
