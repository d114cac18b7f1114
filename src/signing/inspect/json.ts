// The JSON shape of PackageInfo outside the process (`signet inspect --json`, API responses):
// snake_case keys like the rest of the HTTP API, and the icon described by size and SHA-256
// instead of its bytes.
import { createHash } from 'node:crypto';
import type { PackageInfo } from './types.ts';

export type PackageInfoJson = Record<string, unknown>;

export function packageInfoJson(info: PackageInfo): PackageInfoJson {
  const icon = info.icon === null ? null : {
    path: info.icon.path,
    format: info.icon.format,
    cgbi: info.icon.cgbi,
    width: info.icon.width,
    height: info.icon.height,
    density: info.icon.density,
    source: info.icon.source,
    size: info.icon.bytes?.length ?? null,
    sha256: info.icon.bytes === null ? null : createHash('sha256').update(info.icon.bytes).digest('hex'),
  };
  const common = { platform: info.platform, bundle_id: info.bundleId, name: info.name, version: info.version, build: info.build };
  if (info.platform === 'ios') {
    return {
      ...common, min_os: info.minOs, app_path: info.appPath, executable: info.executable,
      device_family: info.deviceFamily, supported_platforms: info.supportedPlatforms, icon, icon_issue: info.iconIssue,
    };
  }
  return {
    ...common, version_code: info.versionCode, version_code_major: info.versionCodeMajor,
    min_sdk: info.minSdk, min_sdk_codename: info.minSdkCodename, target_sdk: info.targetSdk, target_sdk_codename: info.targetSdkCodename,
    labels: info.labels, label_issue: info.labelIssue, debuggable: info.debuggable, native_abis: info.nativeAbis, icon, icon_issue: info.iconIssue,
  };
}
