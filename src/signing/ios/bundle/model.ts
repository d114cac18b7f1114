// The bundle model of an .ipa, read from the zip's entry names and Info.plist files without
// extracting anything (ios-signing.md §2 step 3, §12).
import type { PlistDict, PlistFormat } from '../../plist/index.ts';
import type { ZipEntry } from '../../zip/index.ts';

/**
 * What a bundle is, from its Info.plist (CFBundlePackageType, NSExtension): it decides whether
 * it carries a provisioning profile and entitlements.
 */
export type BundleKind = 'app' | 'appex' | 'xpc' | 'framework' | 'bundle';

/** A provisioned bundle's profile and every bundle's resource seal, relative to its `dir`. */
export const PROFILE_FILE = 'embedded.mobileprovision';
export const CODE_RESOURCES_FILE = '_CodeSignature/CodeResources';

export interface InfoPlist {
  entry: ZipEntry;
  bytes: Buffer;
  dict: PlistDict;
  /** Written back in the same format when edited. */
  format: PlistFormat;
}

export interface BundleNode {
  /** Zip path of the bundle directory, ending in "/", e.g. "Payload/A.app/PlugIns/W.appex/". */
  dir: string;
  /** Path relative to the main app's directory ("" for the main app). */
  relativeDir: string;
  kind: BundleKind;
  info: InfoPlist;
  bundleId: string;
  /** CFBundleExecutable, relative to `dir`. */
  executable: string;
  executableEntry: ZipEntry;
  children: BundleNode[];
  parent: BundleNode | undefined;
  /** Whether the bundle had an embedded.mobileprovision in the input. */
  hadProfile: boolean;
}

export interface IpaLayout {
  /** "Payload/<Name>.app/". */
  appDir: string;
  main: BundleNode;
  /** Every bundle, children before parents (the signing order: leaf-first). */
  postOrder: BundleNode[];
  /** Entries left out of the output: macOS resource forks (`__MACOSX/`). */
  dropped: ZipEntry[];
  /** Entries outside the app bundle, copied untouched (SwiftSupport/, Symbols/, META-INF/, iTunesMetadata.plist …). */
  outside: ZipEntry[];
  /** Non-directory entries inside the app, in file order. */
  appFiles: ZipEntry[];
  /** Directory entries inside the app (copied, never sealed). */
  appDirectories: ZipEntry[];
  /**
   * Nested code bundles whose Info.plist names an executable that is not in the bundle (only
   * with `discoverLayout(zip, { brokenBundles: 'report' })`; otherwise the first one is refused).
   */
  brokenBundles: BrokenBundle[];
}

/** A framework, extension, app or XPC service without the executable its Info.plist names. */
export interface BrokenBundle {
  /** Zip path of the bundle directory, ending in "/". */
  dir: string;
  kind: BundleKind;
  /** Zip path of the missing executable. */
  executable: string;
  /** The executable's entry is a symbolic link rather than missing. */
  symlink: boolean;
}

/** What is wrong with a broken bundle, naming the bundle and the missing file. */
export function describeBrokenBundle(bundle: BrokenBundle): string {
  const name = bundle.executable.slice(bundle.dir.length);
  const what = bundle.symlink ? `${bundle.executable}, which is a symbolic link, not a file` : `${bundle.executable}, which is not in the bundle`;
  return `${bundle.dir}Info.plist names the executable "${name}": ${what} (codesign refuses to sign such a ${bundle.kind}, and iOS cannot load it)`;
}

/** Does the bundle get `embedded.mobileprovision` and entitlements? (installd: apps, extensions, XPC services.) */
export function isProvisioned(bundle: BundleNode): boolean {
  return bundle.kind === 'app' || bundle.kind === 'appex' || bundle.hadProfile;
}

/** The deepest bundle holding the zip path `name`. */
export function owningBundle(layout: IpaLayout, name: string): BundleNode {
  let best = layout.main;
  for (const bundle of layout.postOrder) if (name.startsWith(bundle.dir) && bundle.dir.length > best.dir.length) best = bundle;
  return best;
}
