// What `inspectPackage` reports about an uploaded app: the identity shown in task records,
// upload responses, `signet inspect` and install pages.
import type { IconFormat } from '../package/icon.ts';



export interface PackageIcon {
  /** Archive path of the chosen image. */
  readonly path: string;
  readonly format: IconFormat;
  /**
   * iOS only: the PNG is Apple's "CgBI" variant (BGRA, premultiplied, raw deflate) that ordinary
   * decoders reject; convert it before serving (the distribution layer does).
   */
  readonly cgbi: boolean;
  /** Pixel size read from the image header, when it has one Signet can read (PNG). */
  readonly width: number | null;
  readonly height: number | null;
  /** The image bytes, or null when icon bytes were not requested. */
  readonly bytes: Buffer | null;
  /**
   * Android: `legacy` (complete icon), `adaptive-foreground`, `xml-bitmap`; iOS: `bundle` (a loose
   * PNG) or `asset-catalog` (decoded from Assets.car into a standard PNG; `path` is the catalog).
   */
  readonly source: 'legacy' | 'adaptive-foreground' | 'xml-bitmap' | 'bundle' | 'asset-catalog';
  /** Android: dpi of the chosen variant. */
  readonly density: number | null;
}

interface CommonInfo {
  /** CFBundleIdentifier, or the Android package name. */
  readonly bundleId: string;
  /** CFBundleDisplayName / CFBundleName, or the application label in its best locale. */
  readonly name: string | null;
  /** CFBundleShortVersionString, or android:versionName. */
  readonly version: string | null;
  /** CFBundleVersion, or the Android long version code in decimal. */
  readonly build: string | null;
  readonly icon: PackageIcon | null;
  /** Why `icon` is null, in plain words (e.g. "only vector drawables"). */
  readonly iconIssue: string | null;
}

export interface IosPackageInfo extends CommonInfo {
  readonly platform: 'ios';
  /** "Payload/Example.app/" */
  readonly appPath: string;
  /** MinimumOSVersion, e.g. "15.0". */
  readonly minOs: string | null;
  readonly executable: string | null;
  /** UIDeviceFamily: 1 iPhone, 2 iPad, 3 Apple TV, 4 Apple Watch, 6 Mac, 7 Vision. */
  readonly deviceFamily: readonly number[];
  readonly supportedPlatforms: readonly string[];
}

export interface AndroidPackageInfo extends CommonInfo {
  readonly platform: 'android';
  /** android:versionCode (low 32 bits, as `aapt dump badging` prints it). */
  readonly versionCode: number;
  readonly versionCodeMajor: number;
  readonly minSdk: number;
  /** A pre-release codename given instead of a number (minSdk is then 10000). */
  readonly minSdkCodename: string | null;
  readonly targetSdk: number | null;
  readonly targetSdkCodename: string | null;
  /** The label per locale ("" = default). */
  readonly labels: Readonly<Record<string, string>>;
  /** Why `name` is null, when it is. */
  readonly labelIssue: string | null;
  readonly debuggable: boolean;
  /**
   * ABIs the APK carries native code for: the <abi> of every `lib/<abi>/*.so` entry, sorted
   * (PackageManager installs native libraries from these folders; an APK without any runs on
   * every ABI). Empty when the app is pure Java/Kotlin.
   */
  readonly nativeAbis: readonly string[];
}

export type PackageInfo = IosPackageInfo | AndroidPackageInfo;

export interface InspectOptions {
  /** Read the icon's bytes (default true). Upload validation can skip them. */
  readonly iconBytes?: boolean;
}

export type { InvalidPackageReason } from '../package/invalid-package.ts';
