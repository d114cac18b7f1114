// The install page, rendered on the server for one visitor in their language. Everything a
// tester needs works without JavaScript: the install link is a plain <a href>, the in-app-browser
// overlay is pure markup, the QR code is inline SVG, a super-signature page in progress refreshes
// itself with <meta http-equiv="refresh">. The page script (page-script.ts) only promotes the
// install button on iPads that present themselves as a Mac.
import type { Platform } from '../../signing/platform.ts';
import { compatibility } from '../compatibility.ts';
import { html, raw, type Html } from '../html.ts';
import { messages, type Language, type Messages } from '../i18n/index.ts';
import { previewTags, type PreviewModel } from '../link-preview.ts';
import type { ReleaseRequirements } from '../service.ts';
import type { Visitor } from '../user-agent.ts';
import { renderAppFacts } from './app-facts.ts';
import { appIcon } from './app-header.ts';
import { pageFooter, renderDocument } from './layout.ts';
import { renderReleaseNotes } from './release-notes.ts';

/** What super signature puts in place of the install button for iPhone and iPad visitors. */
export interface SuperSection {
  body: Html;
  /** Reload the page (progress of the device's build); null: the page is final. */
  refresh: { url: string; seconds: number } | null;
}

export interface InstallPageModel {
  language: Language;
  /** Path and query of this request (the language switcher links back to it). */
  requestUrl: string;
  app: {
    name: string;
    version: string | null;
    build: string | null;
    bundleId: string | null;
    platform: Platform;
    sizeBytes: number;
    releasedAt: Date;
    iconUrl: string | null;
  };
  requirements: ReleaseRequirements;
  /** Release notes (plain text or Markdown) of this release. */
  notes: string | null;
  downloads: { count: number; max: number | null };
  expiresAt: Date | null;
  /** Absolute URL of this page: what the QR code encodes. */
  pageUrl: string;
  /** The QR code of pageUrl as SVG, labelled in the page's language (qr.ts). */
  qrSvg: string;
  /** itms-services:// link for iOS, the APK URL for Android. */
  installUrl: string;
  /** In-house (enterprise) iOS builds need the "trust the developer" step after installing. */
  enterpriseTrust: { organization: string | null } | null;
  historyUrl: string | null;
  /** Warn when iOS installs are offered over plain HTTP, which iOS refuses. */
  insecure: boolean;
  /** An ad-hoc/development build whose profiles do not list the visitor's known device (enrollment). */
  notProvisioned?: boolean;
  /** Super signature: replaces the install button for iOS visitors (device registration, progress, then Install). */
  superAction?: SuperSection | null;
  /** Open Graph tags for link previews. */
  preview: PreviewModel | null;
  now?: Date;
}

export function renderInstallPage(model: InstallPageModel, visitor: Visitor): string {
  const { app, language } = model;
  const t = messages(language);
  const ios = app.platform === 'ios';
  const onIos = visitor.device === 'iphone' || visitor.device === 'ipad';
  const matching = ios ? onIos : visitor.device === 'android';
  // Computers see the QR code first (to open the page on a phone); a phone of the other platform
  // sees why it cannot install, then the code to pass the page on.
  const qrFirst = !matching && (visitor.device === 'desktop' || visitor.device === 'mac-or-ipad');
  const fit = matching ? compatibility(app.platform, model.requirements, visitor) : { kind: 'ok' as const };

  const notices: Html[] = [];
  // Only someone who could install the iOS app needs to know why it will fail over plain HTTP.
  if (model.insecure && ios && (onIos || visitor.device === 'mac-or-ipad')) notices.push(html`<p class="notice" role="alert" id="insecure">${t.insecure}</p>`);
  if (fit.kind === 'os-too-old') {
    notices.push(html`<p class="notice bad" role="alert" id="os-too-old">${fit.platform === 'ios' ? t.osTooOldIos(fit.minimum, fit.current) : t.osTooOldAndroid(fit.minimum, fit.current)}</p>`);
  }
  if (model.notProvisioned && onIos) notices.push(html`<p class="notice bad" role="alert" id="not-provisioned">${t.notProvisioned}</p>`);
  if (fit.kind === 'ipad-only') notices.push(html`<p class="notice bad" role="alert" id="wrong-device">${t.wrongDeviceIpadOnly}</p>`);

  const installButton = html`<a class="button" id="install" href="${model.installUrl}"${ios ? '' : raw(' download')}>${ios ? t.installButton : t.downloadApkButton}</a>`;
  let action: Html;
  if (matching && fit.kind === 'ipad-only') {
    action = html``;
  } else if (matching && model.superAction) {
    action = model.superAction.body;
  } else if (matching) {
    action = html`${installButton}${ios ? iosAfterInstall(t, model, visitor) : androidAfterInstall(t)}`;
  } else if (visitor.device === 'mac-or-ipad' && ios) {
    const link = html`<a href="${model.installUrl}" id="install-ipad" data-button-label="${t.installButton}">${t.ipadInstallLink(app.name)}</a>`;
    action = html`<p class="hint" id="ipad-hint">${t.ipadHint(link)}</p>${iosAfterInstall(t, model, visitor)}`;
  } else if (visitor.device === 'desktop' || visitor.device === 'mac-or-ipad') {
    action = html`<p class="hint">${ios ? t.openOnIos : t.openOnAndroid}</p>${ios ? '' : html`<p class="hint"><a href="${model.installUrl}" download>${t.downloadApkToComputer}</a></p>`}`;
  } else {
    action = html`<p class="notice" role="status" id="wrong-platform">${ios ? t.wrongPlatformIos : t.wrongPlatformAndroid}</p>`;
  }

  const qr = html`<figure class="card qr" id="qr">${raw(model.qrSvg)}<figcaption>${ios ? t.qrCaptionIos : t.qrCaptionAndroid}</figcaption></figure>`;
  const version = app.version ? t.version(app.version, app.build && app.build !== app.version ? app.build : null) : null;
  const hero = html`<section class="card hero" aria-labelledby="app-name">
${appIcon(t, app.name, app.iconUrl)}
<h1 id="app-name">${app.name}</h1>
${version ? html`<p class="subtitle">${version}</p>` : ''}
<ul class="chips"><li class="chip">${ios ? t.platformIos : t.platformAndroid}</li></ul>
${notices}
<div class="action">${action}</div>
</section>`;

  const notes = model.notes ? html`<section class="card notes" aria-labelledby="notes-title"><h2 id="notes-title">${t.whatsNew}</h2><div class="body">${renderReleaseNotes(model.notes)}</div></section>` : '';
  const facts = renderAppFacts(language, {
    platform: app.platform,
    bundleId: app.bundleId,
    sizeBytes: app.sizeBytes,
    releasedAt: app.releasedAt,
    requirements: model.requirements,
    downloads: model.downloads,
    expiresAt: model.expiresAt,
  }, model.now ?? new Date());
  const history = model.historyUrl ? html`<a href="${model.historyUrl}">${t.earlierVersions}</a>` : null;

  const overlay = visitor.inAppBrowser ? inAppOverlay(t, visitor) : '';
  const body = html`${overlay}<main class="page${qrFirst ? ' wide' : ''}">
${qrFirst ? html`${qr}${hero}` : hero}
${notes}
${facts}
${qrFirst ? '' : qr}
${pageFooter(language, model.requestUrl, history)}
</main>`;

  const refresh = matching ? model.superAction?.refresh : null;
  const head = html`${model.preview ? previewTags(model.preview) : ''}${refresh ? html`<meta http-equiv="refresh" content="${refresh.seconds};url=${refresh.url}">` : ''}`;
  return renderDocument({ language, title: t.installTitle(app.name), body, head, script: ios && visitor.device === 'mac-or-ipad' });
}

function inAppOverlay(t: Messages, visitor: Visitor): Html {
  const onIos = visitor.device === 'iphone' || visitor.device === 'ipad' || visitor.device === 'mac-or-ipad';
  const names: Record<NonNullable<Visitor['inAppBrowser']>, string> = {
    wechat: t.inAppWechat, qq: t.inAppQq, weibo: t.inAppWeibo, dingtalk: t.inAppDingtalk, alipay: t.inAppAlipay,
    facebook: t.inAppFacebook, instagram: t.inAppInstagram, line: t.inAppLine,
  };
  const menu = html`<span class="menu" aria-hidden="true">•••</span>`;
  return html`<div class="overlay" role="dialog" aria-modal="true" aria-labelledby="overlay-title" id="in-app-overlay">
<svg class="arrow" viewBox="0 0 88 88" aria-hidden="true"><path d="M14 80 C 20 40, 44 22, 74 14" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round"/><path d="M56 8 L76 13 L68 32" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/></svg>
<h2 id="overlay-title">${onIos ? t.overlayTitleSafari : t.overlayTitleBrowser}</h2>
<p>${t.overlayText(names[visitor.inAppBrowser!], menu, onIos ? t.overlayChoiceSafari : t.overlayChoiceBrowser)}</p>
</div>`;
}

function iosAfterInstall(t: Messages, model: InstallPageModel, visitor: Visitor): Html {
  const steps: Html[] = [html`<li>${t.afterInstallConfirm}</li>`];
  if (model.enterpriseTrust) {
    steps.push(html`<li>${t.afterInstallTrust(model.enterpriseTrust.organization, visitor.iosMajor !== null && visitor.iosMajor >= 18)}</li>`);
  }
  if (visitor.iosMajor === null || visitor.iosMajor >= 16) steps.push(html`<li>${t.afterInstallDeveloperMode}</li>`);
  return html`<section class="steps" aria-labelledby="after-title"><h2 id="after-title">${t.afterInstallTitle}</h2><ol>${steps}</ol></section>`;
}

function androidAfterInstall(t: Messages): Html {
  return html`<section class="steps" aria-labelledby="after-title"><h2 id="after-title">${t.afterDownloadTitle}</h2><ol><li>${t.afterDownloadOpen}</li><li>${t.afterDownloadUnknownApps}</li></ol></section>`;
}
