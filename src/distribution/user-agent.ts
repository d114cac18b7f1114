// Which install experience a visitor gets, from the User-Agent alone (the page must work without
// JavaScript). iPadOS 13+ Safari sends a desktop macOS user agent by default, which a server cannot
// tell apart from a Mac: such visitors are `mac-or-ipad`, and the page shows the QR code first plus
// the iOS install link, and a tiny script promotes the install button when the browser reports touch
// (navigator.maxTouchPoints > 0, which Macs never do).
import type { Platform } from '../signing/platform.ts';
export type Device = 'iphone' | 'ipad' | 'mac-or-ipad' | 'android' | 'desktop';

export interface Visitor {
  device: Device;
  /** An in-app browser that blocks itms-services links and file downloads. */
  inAppBrowser: 'wechat' | 'qq' | 'weibo' | 'dingtalk' | 'alipay' | 'facebook' | 'instagram' | 'line' | null;
  /** iOS major version when known (Developer Mode guidance from iOS 16, "Allow & Restart" from 18). */
  iosMajor: number | null;
  /** The OS and its version ("17.4", "14") when the user agent states them reliably. */
  os: { name: Platform; version: string } | null;
}

// Order matters: WeChat's UA also contains "QQ" in some builds (MQQBrowser), so WeChat is first.
const IN_APP: ReadonlyArray<[Visitor['inAppBrowser'] & string, RegExp]> = [
  ['wechat', /MicroMessenger\//i],
  ['qq', /\bQQ\/\d/i],
  ['weibo', /Weibo/i],
  ['dingtalk', /DingTalk/i],
  ['alipay', /AlipayClient/i],
  ['facebook', /FBAN|FBAV/],
  ['instagram', /Instagram/],
  ['line', /\bLine\/\d/],
];

export function classifyUserAgent(userAgent: string | undefined): Visitor {
  const ua = userAgent ?? '';
  const inAppBrowser = IN_APP.find(([, pattern]) => pattern.test(ua))?.[0] ?? null;
  const ios = iosVersionOf(ua);
  const iosMajor = ios === null ? null : Number(ios.split('.')[0]);
  let device: Device;
  if (/\biPad\b/.test(ua)) device = 'ipad';
  else if (/\biPhone\b|\biPod\b/.test(ua)) device = 'iphone';
  else if (/\bAndroid\b/.test(ua)) device = 'android';
  else if (/\bMacintosh\b/.test(ua)) device = 'mac-or-ipad';
  else device = 'desktop';
  const android = device === 'android' ? androidVersionOf(ua) : null;
  const os = ios !== null && (device === 'iphone' || device === 'ipad') ? { name: 'ios' as const, version: ios } : android === null ? null : { name: 'android' as const, version: android };
  return { device, inAppBrowser, iosMajor, os };
}

/**
 * "17.4" from "CPU iPhone OS 17_4 like Mac OS X". Safari 26 freezes that token at 18_6 and
 * reports the real release only as `Version/26.x`, so a higher Safari version wins.
 */
function iosVersionOf(ua: string): string | null {
  const match = /\bOS (\d+)[_.](\d+)(?:[_.](\d+))? like Mac OS X/.exec(ua);
  if (!match) return null;
  const safari = /\bVersion\/(\d+)(?:\.(\d+))?/.exec(ua);
  if (safari && Number(safari[1]) >= 26 && Number(safari[1]) > Number(match[1])) return `${safari[1]}.${safari[2] ?? '0'}`;
  return [match[1], match[2], match[3]].filter((part) => part !== undefined).join('.');
}

/**
 * "14" from "Android 14;". Chrome's reduced user agent always says "Android 10; K", whatever the
 * device runs (Chrome User-Agent Reduction): that version is not the device's, so none is known.
 */
function androidVersionOf(ua: string): string | null {
  if (/\bAndroid 10; K\)/.test(ua)) return null;
  return /\bAndroid (\d+(?:\.\d+){0,2})[;)]/.exec(ua)?.[1] ?? null;
}
