// Which install experience a visitor gets, from the User-Agent alone (the page must work without
// JavaScript). iPadOS 13+ Safari sends a desktop macOS user agent by default, which a server cannot
// tell apart from a Mac: such visitors are `mac-or-ipad`, and the page shows the QR code first plus
// the iOS install link, and a tiny script promotes the install button when the browser reports touch
// (navigator.maxTouchPoints > 0, which Macs never do).
export type Device = 'iphone' | 'ipad' | 'mac-or-ipad' | 'android' | 'desktop';

export interface Visitor {
  device: Device;
  /** An in-app browser that blocks itms-services links and file downloads. */
  inAppBrowser: 'wechat' | 'qq' | 'weibo' | 'dingtalk' | 'alipay' | 'facebook' | 'instagram' | 'line' | null;
  /** iOS major version when known (Developer Mode guidance from iOS 16, "Allow & Restart" from 18). */
  iosMajor: number | null;
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
  const iosVersion = /\bOS (\d+)[_.]\d+(?:[_.]\d+)? like Mac OS X/.exec(ua);
  const iosMajor = iosVersion ? Number(iosVersion[1]) : null;
  let device: Device;
  if (/\biPad\b/.test(ua)) device = 'ipad';
  else if (/\biPhone\b|\biPod\b/.test(ua)) device = 'iphone';
  else if (/\bAndroid\b/.test(ua)) device = 'android';
  else if (/\bMacintosh\b/.test(ua)) device = 'mac-or-ipad';
  else device = 'desktop';
  return { device, inAppBrowser, iosMajor };
}
