// An APK's identity from its binary AndroidManifest.xml and resources.arsc.
import { ANDROID_MANIFEST, MAX_MANIFEST_BYTES } from '../android/apk/open.ts';
import { readApkMetadata, type ApkMetadata, type ResourceFiles } from '../android/axml/index.ts';
import { SigningError } from '../errors.ts';
import type { ZipReader } from '../zip/index.ts';
import { readPngHeader } from './png-header.ts';
import { refuse } from '../package/refuse.ts';
import type { AndroidPackageInfo, InspectOptions } from './types.ts';

/** A resource table of a very large app is tens of megabytes. */
export const MAX_RESOURCE_TABLE_BYTES = 256 * 1024 * 1024;

export async function inspectAndroid(zip: ZipReader, options: InspectOptions): Promise<AndroidPackageInfo> {
  const manifestEntry = zip.getEntry(ANDROID_MANIFEST)!;
  const tableEntry = zip.getEntry('resources.arsc');
  const files: ResourceFiles = {
    size: (path) => {
      const entry = zip.getEntry(path);
      return entry === undefined || entry.isDirectory ? null : entry.uncompressedSize;
    },
    read: (path) => zip.readEntry(zip.getEntry(path)!, MAX_RESOURCE_TABLE_BYTES),
  };
  let meta: ApkMetadata;
  try {
    meta = await readApkMetadata({
      manifest: await zip.readEntry(manifestEntry, MAX_MANIFEST_BYTES),
      resources: tableEntry === undefined ? null : await zip.readEntry(tableEntry, MAX_RESOURCE_TABLE_BYTES),
      files,
    });
  } catch (error) {
    if (error instanceof SigningError && error.code === 'manifest_invalid') {
      throw refuse('manifest_unreadable', `AndroidManifest.xml or resources.arsc cannot be parsed: ${error.message}`, { cause: error, details: { cause: error.code } });
    }
    throw error;
  }
  const png = meta.icon?.format === 'png' ? readPngHeader(meta.icon.bytes) : null;
  const longVersionCode = (BigInt(meta.versionCodeMajor >>> 0) << 32n) | BigInt(meta.versionCode >>> 0);
  return {
    platform: 'android',
    bundleId: meta.packageName,
    name: meta.label,
    version: meta.versionName,
    // PackageInfo.composeLongVersionCode(): (long) major << 32 | (versionCode & 0xffffffffL).
    build: longVersionCode.toString(),
    versionCode: meta.versionCode,
    versionCodeMajor: meta.versionCodeMajor,
    minSdk: meta.minSdk.level,
    minSdkCodename: meta.minSdk.codename,
    targetSdk: meta.targetSdk?.level ?? null,
    targetSdkCodename: meta.targetSdk?.codename ?? null,
    labels: meta.labels,
    labelIssue: meta.labelIssue,
    debuggable: meta.debuggable,
    nativeAbis: nativeAbis(zip),
    icon: meta.icon === null ? null : {
      path: meta.icon.path,
      format: meta.icon.format,
      cgbi: false,
      width: png?.width ?? null,
      height: png?.height ?? null,
      bytes: options.iconBytes === false ? null : meta.icon.bytes,
      source: meta.icon.source,
      density: meta.icon.density,
    },
    iconIssue: meta.iconIssue,
  };
}

/**
 * `lib/<abi>/<name>.so` entries name the ABIs (AOSP NativeLibraryHelper copies native code from
 * exactly these paths); ABI folder names are short ASCII tokens such as arm64-v8a or x86_64.
 */
function nativeAbis(zip: ZipReader): string[] {
  const abis = new Set<string>();
  for (const entry of zip.entries) {
    const match = /^lib\/([A-Za-z0-9_-]{1,32})\/[^/]+\.so$/.exec(entry.name);
    if (match && !entry.isDirectory) abis.add(match[1]!);
  }
  return [...abis].sort();
}
