// Compares what Signet reads from an APK with `aapt dump badging` (the oracle), field by field.
import assert from 'node:assert/strict';
import type { AndroidPackageInfo } from '../../src/signing/inspect/index.ts';
import type { Badging } from './aapt-apk.ts';

type Comparable = Pick<AndroidPackageInfo, 'bundleId' | 'versionCode' | 'version' | 'minSdk' | 'minSdkCodename' | 'targetSdk' | 'targetSdkCodename' | 'name' | 'labels' | 'icon'>;

export function assertMatchesBadging(info: Comparable, badging: Badging, where: string): void {
  assert.equal(info.bundleId, badging.package, `${where}: package`);
  // aapt prints '' for an absent versionCode/versionName; Signet reports 0 and null.
  assert.equal(info.versionCode, badging.versionCode === '' ? 0 : Number(badging.versionCode), `${where}: versionCode`);
  assert.equal(info.version, badging.versionName === '' ? null : badging.versionName, `${where}: versionName`);
  // No <uses-sdk minSdkVersion>: aapt prints nothing, Android (and Signet) use 1.
  if (badging.sdkVersion === null) assert.deepEqual([info.minSdk, info.minSdkCodename], [1, null], `${where}: sdkVersion`);
  else assert.equal(info.minSdkCodename ?? String(info.minSdk), badging.sdkVersion, `${where}: sdkVersion`);
  if (badging.targetSdkVersion === null) assert.equal(info.targetSdk, null, `${where}: targetSdkVersion`);
  else assert.equal(info.targetSdkCodename ?? String(info.targetSdk), badging.targetSdkVersion, `${where}: targetSdkVersion`);
  // application-label: is the default-locale label; without one aapt prints none and Signet
  // applies its documented best-locale rule (checked separately).
  if (badging.label !== null) assert.equal(info.name, badging.label, `${where}: application-label`);
  // aapt lists every locale the table has; Signet lists explicit translations, and a locale
  // without one shows the default label.
  for (const [locale, label] of Object.entries(badging.labels)) assert.equal(info.labels[locale] ?? info.labels[''], label, `${where}: application-label-${locale}`);
  // aapt lists, per density, the file the application's android:icon resolves to. When those are
  // all rasters and Signet chose one of them, it must be the highest density (Signet may choose
  // another resource first — the launcher activity's icon or a raster round icon — by design).
  const listed = Object.entries(badging.icons).filter(([dpi]) => Number(dpi) < 65534);
  if (info.icon !== null && listed.length > 0 && listed.every(([, file]) => /\.(png|webp|jpe?g)$/i.test(file))
    && listed.some(([, file]) => file === info.icon?.path)) {
    const top = listed.reduce((a, b) => (Number(b[0]) > Number(a[0]) ? b : a));
    assert.equal(info.icon.path, top[1], `${where}: application-icon-${top[0]}`);
  }
}
