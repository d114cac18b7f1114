// The public install page, rendered on the server for one visitor. Everything a tester needs works
// without JavaScript: the install link is a plain <a href>, the in-app-browser overlay is pure
// markup, the QR code is inline SVG. The only script promotes the iOS button on iPads that
// present themselves as a Mac (see user-agent.ts).
import { html, raw, type Html } from './html.ts';
import type { Visitor } from './user-agent.ts';

export interface InstallPageModel {
  app: {
    name: string;
    version: string | null;
    build: string | null;
    bundleId: string | null;
    platform: 'ios' | 'android';
    sizeBytes: number;
    releasedAt: Date;
    iconUrl: string | null;
  };
  /** Absolute URL of this page: what the QR code encodes. */
  pageUrl: string;
  qrSvg: string;
  /** itms-services:// link for iOS, the APK URL for Android. */
  installUrl: string;
  /** In-house (enterprise) iOS builds need the "trust the developer" step after installing. */
  enterpriseTrust: { organization: string | null } | null;
  historyUrl: string | null;
  /** Warn when iOS installs are offered over plain HTTP, which iOS refuses. */
  insecure: boolean;
  /** Super signature: replaces the install button for iOS visitors (device registration, progress, then Install). */
  superAction?: Html | null;
}

const IN_APP_NAMES: Record<NonNullable<Visitor['inAppBrowser']>, string> = {
  wechat: 'WeChat', qq: 'QQ', weibo: 'Weibo', dingtalk: 'DingTalk', alipay: 'Alipay',
  facebook: 'Facebook', instagram: 'Instagram', line: 'LINE',
};

export function renderInstallPage(model: InstallPageModel, visitor: Visitor): string {
  const { app } = model;
  const ios = app.platform === 'ios';
  const onIos = visitor.device === 'iphone' || visitor.device === 'ipad';
  const matching = ios ? onIos : visitor.device === 'android';
  const qrFirst = !matching; // desktop visitors (and the wrong platform) see the QR code first

  const title = `Install ${app.name}`;
  const details = [
    app.version && `Version ${app.version}${app.build && app.build !== app.version ? ` (${app.build})` : ''}`,
    formatSize(app.sizeBytes),
    app.releasedAt.toISOString().slice(0, 10),
  ].filter(Boolean).join(' · ');

  const installButton = html`<a class="button" id="install" href="${model.installUrl}"${ios ? '' : raw(' download')}>${ios ? 'Install' : 'Download APK'}</a>`;
  const qr = html`<figure class="qr" id="qr">${raw(model.qrSvg)}<figcaption>Scan with your ${ios ? 'iPhone or iPad' : 'Android phone'} camera to open this page</figcaption></figure>`;

  let action: Html;
  if (matching && model.superAction) {
    action = model.superAction;
  } else if (matching) {
    action = html`${installButton}${ios ? iosAfterInstall(model, visitor) : androidAfterInstall()}`;
  } else if (visitor.device === 'mac-or-ipad' && ios) {
    action = html`<p class="hint" id="ipad-hint">On an iPad? <a href="${model.installUrl}" id="install-ipad">Install ${app.name}</a></p>${iosAfterInstall(model, visitor)}`;
  } else if (visitor.device === 'desktop' || visitor.device === 'mac-or-ipad') {
    action = html`<p class="hint">Open this page on your ${ios ? 'iPhone or iPad' : 'Android device'} to install.</p>${ios ? '' : html`<p class="hint"><a href="${model.installUrl}" download>Download the APK to this computer</a></p>`}`;
  } else {
    action = html`<p class="notice" role="status">This app is for ${ios ? 'iPhone and iPad' : 'Android'}; it cannot be installed on this device.</p>`;
  }

  const overlay = visitor.inAppBrowser
    ? html`<div class="overlay" role="dialog" aria-modal="true" aria-labelledby="overlay-title" id="in-app-overlay">
<h2 id="overlay-title">Open in ${onIos || visitor.device === 'mac-or-ipad' ? 'Safari' : 'your browser'}</h2>
<p>${IN_APP_NAMES[visitor.inAppBrowser]} blocks app installs. Tap <strong>•••</strong> at the top right, then choose <strong>${onIos ? 'Open in Safari' : 'Open in Browser'}</strong>.</p>
</div>`
    : '';

  // Only someone who could install the iOS app needs to know why it will fail over plain HTTP.
  const insecure = model.insecure && ios && (onIos || visitor.device === 'mac-or-ipad')
    ? html`<p class="notice" role="alert">This server is not using HTTPS, so iOS will refuse the install. Ask the administrator to set an https public URL.</p>`
    : '';

  const body = html`<main>
${overlay}
<header>
${app.iconUrl ? html`<img class="icon" src="${app.iconUrl}" alt="${app.name} app icon" width="96" height="96">` : html`<div class="icon placeholder" role="img" aria-label="${app.name}">${app.name.slice(0, 1)}</div>`}
<h1>${app.name}</h1>
<p class="meta">${details}</p>
${app.bundleId ? html`<p class="meta">${app.bundleId}</p>` : ''}
</header>
${insecure}
${qrFirst ? html`${qr}${action}` : html`${action}${qr}`}
${model.historyUrl ? html`<p class="hint"><a href="${model.historyUrl}">Earlier versions</a></p>` : ''}
</main>
${visitor.device === 'mac-or-ipad' && ios ? raw(`<script>${IPAD_SCRIPT}</script>`) : ''}`;

  return page(title, body);
}

function iosAfterInstall(model: InstallPageModel, visitor: Visitor): Html {
  const steps: Html[] = [];
  if (model.enterpriseTrust) {
    const org = model.enterpriseTrust.organization ?? 'the developer';
    steps.push(html`<li>Open <strong>Settings › General › VPN &amp; Device Management</strong>, tap <strong>${org}</strong> and choose <strong>Trust</strong>${visitor.iosMajor !== null && visitor.iosMajor >= 18 ? html` (<strong>Allow &amp; Restart</strong> on iOS 18 and later)` : ''}. This needs an Internet connection.</li>`);
  }
  if (visitor.iosMajor === null || visitor.iosMajor >= 16) {
    steps.push(html`<li>If iOS asks for Developer Mode, turn it on in <strong>Settings › Privacy &amp; Security › Developer Mode</strong> and restart.</li>`);
  }
  return html`<section class="steps" aria-labelledby="after-title"><h2 id="after-title">After tapping Install</h2><ol><li>Confirm <strong>Install</strong> and go to the Home Screen to watch the download.</li>${steps}</ol></section>`;
}

function androidAfterInstall(): Html {
  return html`<section class="steps" aria-labelledby="after-title"><h2 id="after-title">After the download</h2><ol><li>Open the downloaded file.</li><li>If Android asks, allow your browser to <strong>install unknown apps</strong>.</li></ol></section>`;
}

export interface HistoryRow {
  version: string | null;
  build: string | null;
  date: Date;
  url: string;
  available: boolean;
}

export function renderHistoryPage(appName: string, rows: readonly HistoryRow[]): string {
  const items = rows.map((row) => html`<tr><td>${row.available ? html`<a href="${row.url}">${row.version ?? '—'}</a>` : row.version ?? '—'}</td><td>${row.build ?? ''}</td><td>${row.date.toISOString().slice(0, 10)}</td><td>${row.available ? 'Available' : 'Unavailable'}</td></tr>`);
  return page(`${appName} — versions`, html`<main><header><h1>${appName}</h1><p class="meta">All versions</p></header>
<table><caption>Releases, newest first</caption><thead><tr><th scope="col">Version</th><th scope="col">Build</th><th scope="col">Date</th><th scope="col">Status</th></tr></thead>
<tbody>${items}</tbody></table></main>`);
}

/** 410 and other dead ends: a clear message, no install affordance. */
export function renderMessagePage(title: string, message: string): string {
  return page(title, html`<main><header><h1>${title}</h1></header><p class="notice" role="status">${message}</p></main>`);
}

export function renderPasswordPage(appName: string, action: string, wrongPassword: boolean): string {
  return page(`Install ${appName}`, html`<main><header><h1>${appName}</h1><p class="meta">This install link is password protected.</p></header>
<form method="post" action="${action}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${wrongPassword ? raw(' aria-invalid="true" aria-describedby="password-error"') : ''}>
${wrongPassword ? html`<p class="notice" id="password-error" role="alert">That password is not correct.</p>` : ''}
<button class="button" type="submit">Continue</button>
</form></main>`);
}

function page(title: string, body: Html): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${html`${title}`}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

function formatSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.round(bytes / 1024))} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

// Promote the iOS button when a "Mac" turns out to be a touch device (iPadOS desktop mode).
// Inline scripts and styles are constants: the Content-Security-Policy allows exactly these by
// their SHA-256 (INLINE_SOURCES), so nothing else inline can run.
const IPAD_SCRIPT = `
if (navigator.maxTouchPoints > 0) {
  var hint = document.getElementById('ipad-hint'), link = document.getElementById('install-ipad');
  if (hint && link) { link.className = 'button'; link.id = 'install'; link.textContent = 'Install'; hint.replaceWith(link); }
  var qr = document.getElementById('qr'); if (qr) qr.parentNode.appendChild(qr);
}
`;

export const PAGE_STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;background:#f4f5f7;color:#1c1e21}
main{max-width:28rem;margin:0 auto;padding:2rem 1.25rem;text-align:center}
.icon{width:96px;height:96px;border-radius:22px;box-shadow:0 1px 4px rgba(0,0,0,.2)}
.placeholder{display:inline-flex;align-items:center;justify-content:center;background:#3b5bdb;color:#fff;font-size:48px}
h1{font-size:1.5rem;margin:.75rem 0 .25rem}h2{font-size:1.05rem;margin:0 0 .5rem}
.meta{margin:0;color:#555;font-size:.9rem}
.button{display:inline-block;margin:1.5rem 0 .5rem;padding:.8rem 2.5rem;border:0;border-radius:999px;background:#0a66ff;color:#fff;font-size:1.1rem;font-weight:600;text-decoration:none;cursor:pointer}
.button:focus-visible,a:focus-visible,input:focus-visible{outline:3px solid #ffbf47;outline-offset:2px}
.qr{margin:1.5rem auto;width:220px}.qr svg{width:220px;height:220px;background:#fff;border-radius:8px}
figcaption,.hint{color:#555;font-size:.9rem}
.notice{background:#fff4e5;border:1px solid #f0b35a;border-radius:8px;padding:.75rem}
.steps{text-align:left;background:#fff;border-radius:12px;padding:1rem 1.25rem;margin-top:1rem}.steps ol{margin:0;padding-left:1.25rem}
form{display:flex;flex-direction:column;gap:.5rem;margin-top:1.5rem;text-align:left}input{font-size:1rem;padding:.6rem;border:1px solid #999;border-radius:6px}
.overlay{position:fixed;inset:0;background:rgba(0,0,0,.85);color:#fff;padding:3rem 1.5rem;text-align:right;z-index:10}
.overlay h2{font-size:1.4rem;text-align:right}.overlay p{text-align:right}
table{width:100%;border-collapse:collapse;background:#fff;border-radius:8px;text-align:left}caption{text-align:left;color:#555;padding:.5rem 0}th,td{padding:.5rem;border-bottom:1px solid #e3e3e3}
`;

/** Every inline <script> and <style> body the pages use, for the CSP's hashes. */
export const INLINE_SOURCES = { scripts: [IPAD_SCRIPT], styles: [PAGE_STYLE] } as const;
