// Whether the visitor's device can run a release, from what its user agent says and what the
// package requires (stored when it was published). Only definite mismatches are reported: a
// user agent that hides its OS version (Chrome's reduced "Android 10; K", iPadOS in desktop mode)
// gets no warning.
import type { Platform } from '../signing/platform.ts';
import type { ReleaseRequirements } from './service.ts';
import type { Visitor } from './user-agent.ts';

/**
 * Android API levels and the release that introduced each (AOSP "Codenames, tags, and build
 * numbers"; developer.android.com <uses-sdk>). 4.4W (20) and 12L (32) share their version
 * number with the level before them for comparisons.
 */
const ANDROID_RELEASES: ReadonlyArray<[level: number, version: string]> = [
  [1, '1.0'], [2, '1.1'], [3, '1.5'], [4, '1.6'], [5, '2.0'], [6, '2.0.1'], [7, '2.1'], [8, '2.2'], [9, '2.3'], [10, '2.3.3'],
  [11, '3.0'], [12, '3.1'], [13, '3.2'], [14, '4.0'], [15, '4.0.3'], [16, '4.1'], [17, '4.2'], [18, '4.3'], [19, '4.4'], [20, '4.4W'],
  [21, '5.0'], [22, '5.1'], [23, '6.0'], [24, '7.0'], [25, '7.1'], [26, '8.0'], [27, '8.1'], [28, '9'], [29, '10'], [30, '11'],
  [31, '12'], [32, '12L'], [33, '13'], [34, '14'], [35, '15'], [36, '16'],
];

/** The Android release of an API level ("7.0" for 24), or null for a level newer than this table. */
export function androidVersionOfLevel(level: number): string | null {
  return ANDROID_RELEASES.find(([l]) => l === level)?.[1] ?? null;
}

/** The highest API level a device running Android `version` ("7.1.1") has. */
function androidLevelOfVersion(version: string): number | null {
  let level: number | null = null;
  for (const [l, v] of ANDROID_RELEASES) if (compareVersions(v.replace(/[A-Z]$/, ''), version) <= 0) level = l;
  return level;
}

/** Compares dotted numeric versions ("15.0" vs "15"): negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export type Compatibility =
  | { kind: 'ok' }
  | { kind: 'os-too-old'; platform: Platform; minimum: string; current: string }
  | { kind: 'ipad-only' };

export function compatibility(platform: Platform, requirements: ReleaseRequirements, visitor: Visitor): Compatibility {
  const { minimumOs, deviceFamilies } = requirements;
  const os = visitor.os;
  if (platform === 'ios') {
    if (visitor.device === 'iphone' && deviceFamilies !== null && deviceFamilies.includes('ipad') && !deviceFamilies.includes('iphone')) return { kind: 'ipad-only' };
    if (os?.name === 'ios' && minimumOs !== null && compareVersions(os.version, minimumOs) < 0) {
      return { kind: 'os-too-old', platform, minimum: minimumOs, current: os.version };
    }
    return { kind: 'ok' };
  }
  const required = minimumOs === null ? null : Number(minimumOs);
  if (os?.name === 'android' && required !== null && Number.isInteger(required)) {
    const level = androidLevelOfVersion(os.version);
    const minimum = androidVersionOfLevel(required);
    if (level !== null && minimum !== null && level < required) return { kind: 'os-too-old', platform, minimum, current: os.version };
  }
  return { kind: 'ok' };
}
