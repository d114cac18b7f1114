// What a release's page shows that only the signed package knows: its icon as a standard image,
// the minimum OS, and the devices (iOS) or native ABIs (Android) it runs on. Read once per
// release when it is published (release-reader.ts runs this on a worker thread) and stored with
// the distribution; pages are then served from storage.
import type { IconFormat } from '../signing/package/icon.ts';
import type { DataSource } from '../signing/data-source.ts';
import { inspectPackage, type PackageInfo } from '../signing/inspect/index.ts';
import { normalizePng } from './cgbi.ts';

export interface ReleaseFacts {
  /** A standard PNG (CgBI and asset-catalog icons converted), WebP or JPEG; null: none readable. */
  icon: { bytes: Buffer; format: IconFormat } | null;
  /** iOS MinimumOSVersion ("15.0"); Android minSdkVersion as a decimal API level ("24"). */
  minimumOs: string | null;
  /** iOS only: "iphone", "ipad", "tv", "watch", "mac", "vision". */
  deviceFamilies: string[] | null;
  /** Android only: ABIs with native code (lib/<abi>/); [] runs on every ABI. */
  nativeAbis: string[] | null;
}

/** UIDeviceFamily values (Apple "Information Property List Key Reference", UIDeviceFamily). */
const DEVICE_FAMILIES: Readonly<Record<number, string>> = { 1: 'iphone', 2: 'ipad', 3: 'tv', 4: 'watch', 6: 'mac', 7: 'vision' };

/** Reads the facts of the package behind `source` (the caller closes it). */
export async function readReleaseFacts(source: DataSource): Promise<ReleaseFacts> {
  const info = await inspectPackage(source);
  return { icon: standardIcon(info), ...requirements(info) };
}

export function requirements(info: PackageInfo): Omit<ReleaseFacts, 'icon'> {
  if (info.platform === 'ios') {
    // Without UIDeviceFamily an iOS app is an iPhone app (the key's documented default).
    const families = info.deviceFamily.length === 0 ? [1] : info.deviceFamily;
    return {
      minimumOs: info.minOs !== null && /^\d+(\.\d+){0,2}$/.test(info.minOs) ? info.minOs : null,
      deviceFamilies: [...new Set(families.map((f) => DEVICE_FAMILIES[f]).filter((f) => f !== undefined))],
      nativeAbis: null,
    };
  }
  // A pre-release codename (minSdk 10000) installs only on that preview: no public version to name.
  return { minimumOs: info.minSdkCodename === null ? String(info.minSdk) : null, deviceFamilies: null, nativeAbis: [...info.nativeAbis] };
}

/** The icon as an image browsers show; null when there is none or it cannot be converted. */
function standardIcon(info: PackageInfo): ReleaseFacts['icon'] {
  const icon = info.icon;
  if (icon === null || icon.bytes === null) return null;
  if (icon.format !== 'png' || !icon.cgbi) return { bytes: icon.bytes, format: icon.format };
  try {
    return { bytes: normalizePng(icon.bytes), format: 'png' }; // Apple's CgBI PNGs: browsers cannot show them
  } catch {
    return null; // an unreadable icon never blocks a release; the page shows a placeholder
  }
}
