// The "About this build" list of an install page: what a tester decides with — requirements,
// devices or native ABIs, size, date, downloads and the link's expiry — in the page's language.
import type { Platform } from '../../signing/platform.ts';
import { androidVersionOfLevel } from '../compatibility.ts';
import { html, type Html } from '../html.ts';
import { formatDate, formatDateTime, formatNumber, formatRelative, formatSize, messages, type Language, type Messages } from '../i18n/index.ts';
import type { ReleaseRequirements } from '../service.ts';

export interface AppFactsModel {
  platform: Platform;
  bundleId: string | null;
  sizeBytes: number;
  releasedAt: Date;
  requirements: ReleaseRequirements;
  downloads: { count: number; max: number | null };
  expiresAt: Date | null;
}

export function renderAppFacts(language: Language, model: AppFactsModel, now: Date): Html {
  const t = messages(language);
  const rows: Array<[string, string, string | Html]> = [];
  const requires = requirementText(t, model.platform, model.requirements.minimumOs);
  if (requires) rows.push(['requires', t.factRequires, requires]);
  const families = model.requirements.deviceFamilies;
  if (model.platform === 'ios' && families && families.length > 0) rows.push(['devices', t.factDevices, families.map((f) => deviceName(t, f)).join(t.listSeparator)]);
  const abis = model.requirements.nativeAbis;
  if (model.platform === 'android' && abis) rows.push(['abis', t.factNativeCode, abis.length > 0 ? abis.join(', ') : t.nativeCodeNone]);
  rows.push(['size', t.factSize, formatSize(language, model.sizeBytes)]);
  rows.push(['released', t.factReleased, formatDate(language, model.releasedAt)]);
  const count = formatNumber(language, model.downloads.count);
  rows.push(['downloads', t.factDownloads, model.downloads.max === null ? count : t.downloadsOf(count, formatNumber(language, model.downloads.max))]);
  if (model.expiresAt) {
    rows.push(['expires', t.factExpires, html`${formatDateTime(language, model.expiresAt)}<span class="relative">${formatRelative(language, model.expiresAt, now)}</span>`]);
  }
  if (model.bundleId) rows.push(['bundle-id', model.platform === 'ios' ? t.factBundleId : t.factPackage, model.bundleId]);
  return html`<section class="card facts" aria-labelledby="facts-title"><h2 id="facts-title">${t.factsTitle}</h2><dl>${rows.map(
    ([key, label, value]) => html`<div><dt>${label}</dt><dd data-fact="${key}">${value}</dd></div>`,
  )}</dl></section>`;
}

/** "iOS 15.0 or later", "Android 7.0 or later (API 24)"; null when the package did not say. */
export function requirementText(t: Messages, platform: Platform, minimumOs: string | null): string | null {
  if (minimumOs === null) return null;
  if (platform === 'ios') return t.requiresIos(minimumOs);
  const level = Number(minimumOs);
  if (!Number.isInteger(level)) return null;
  const version = androidVersionOfLevel(level);
  return version === null ? t.requiresAndroidLevel(level) : t.requiresAndroid(version, level);
}

function deviceName(t: Messages, family: string): string {
  switch (family) {
    case 'iphone': return t.deviceIphone;
    case 'ipad': return t.deviceIpad;
    case 'tv': return t.deviceTv;
    case 'watch': return t.deviceWatch;
    case 'mac': return t.deviceMac;
    case 'vision': return t.deviceVision;
    default: return family;
  }
}
