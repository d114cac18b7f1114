// Finds the app and every nested bundle of an .ipa by content: a bundle is a directory whose
// Info.plist names an executable (CFBundleExecutable) present in that directory — whatever the
// directory is called (Frameworks/*.framework, PlugIns/*.appex, Watch/*.app, XPCServices/*.xpc,
// AppClips/*.app, Extensions/*.appex, or anything else). `*.dSYM` companions are never bundles
// (ldid: "Don't try to sign dSYM companion files"). Nothing is extracted to disk.
import { SigningError } from '../../errors.ts';
import { detectPlatform } from '../../package/detect.ts';
import { parsePlist, type PlistDict } from '../../plist/index.ts';
import type { DataSource } from '../../data-source.ts';
import { ZipReader, type ZipEntry } from '../../zip/index.ts';
import { describeBrokenBundle, PROFILE_FILE, type BrokenBundle, type BundleKind, type BundleNode, type InfoPlist, type IpaLayout } from './model.ts';

/** Info.plist files are a few kilobytes; anything bigger is not read into memory. */
const MAX_INFO_PLIST = 4 * 1024 * 1024;

/**
 * Opens the archive, refusing a file that is not a zip the way upload validation does
 * (inspectPackage: `invalid_package` with reason `not_a_zip`), so a task and an upload fail alike.
 */
export async function openIpa(source: DataSource): Promise<ZipReader> {
  try {
    return await ZipReader.open(source);
  } catch (error) {
    if (error instanceof SigningError && error.code === 'zip_invalid') {
      throw new SigningError('invalid_package', `not a readable zip archive: ${error.message}`, { cause: error, details: { reason: 'not_a_zip', cause: error.code } });
    }
    throw error;
  }
}

export interface DiscoverOptions {
  /**
   * A nested framework, extension, app or XPC service whose executable is missing: 'refuse'
   * (default; signing) throws ipa_invalid, 'report' (the verifier) lists it in `brokenBundles`.
   */
  brokenBundles?: 'refuse' | 'report';
}

export async function discoverLayout(zip: ZipReader, options: DiscoverOptions = {}): Promise<IpaLayout> {
  // Same refusals as upload validation (no app, nested Payload, several apps, …): one source of truth.
  const detected = detectPlatform(zip.entries);
  if (detected.platform !== 'ios') throw new SigningError('ipa_invalid', 'The package is an Android app, not an .ipa.');
  const appDir = detected.appPath;
  const inFileOrder = zip.entriesInFileOrder();
  const dropped = inFileOrder.filter((e) => e.name.startsWith('__MACOSX/'));
  const outside = inFileOrder.filter((e) => !e.name.startsWith('__MACOSX/') && !e.name.startsWith(appDir));
  const inside = inFileOrder.filter((e) => e.name.startsWith(appDir) && e.name !== appDir);
  const appFiles = inside.filter((e) => !e.isDirectory);
  const appDirectories = inside.filter((e) => e.isDirectory);
  const byName = new Map(appFiles.map((e) => [e.name, e]));

  // Candidate bundle directories: every directory holding an Info.plist, outside dSYM companions.
  const candidates = appFiles
    .filter((e) => e.name.endsWith('/Info.plist') && !/\.dSYM\//i.test(e.name.slice(appDir.length)))
    .map((e) => e.name.slice(0, -'Info.plist'.length))
    .sort((a, b) => a.length - b.length);

  const bundles: BundleNode[] = [];
  const brokenBundles: BrokenBundle[] = [];
  for (const dir of candidates) {
    const isMain = dir === appDir;
    const infoEntry = byName.get(`${dir}Info.plist`)!;
    const executable = await readExecutableName(zip, infoEntry, isMain);
    if (executable === undefined) continue; // resources with an Info.plist (storyboards, asset bundles)
    const info = await readInfoPlist(zip, infoEntry);
    const executableEntry = byName.get(`${dir}${executable}`);
    if (executableEntry === undefined || executableEntry.isSymlink) {
      if (isMain) throw new SigningError('ipa_invalid', `${dir}Info.plist names the executable "${executable}", which is not in the app`, { details: { path: `${dir}${executable}` } });
      // A framework, extension, app or XPC service is code by definition: without its executable
      // codesign refuses to sign it (it is no valid bundle) and dyld or launchd cannot load it.
      // A plain bundle naming a missing executable is kept as resources: resource bundles made
      // from Xcode's loadable-bundle template carry the key without ever having a binary.
      const kind = bundleKind(info.dict, dir);
      if (isCodeBundle(kind, dir)) {
        const broken: BrokenBundle = { dir, kind, executable: `${dir}${executable}`, symlink: executableEntry !== undefined };
        if (options.brokenBundles !== 'report') throw new SigningError('ipa_invalid', describeBrokenBundle(broken), { details: { path: broken.executable, bundle: dir } });
        brokenBundles.push(broken);
      }
      continue;
    }
    const bundleId = stringValue(info.dict, 'CFBundleIdentifier');
    if (bundleId === undefined || bundleId === '') {
      if (isMain) throw new SigningError('ipa_invalid', `${dir}Info.plist has no CFBundleIdentifier`);
      continue;
    }
    const parent = isMain ? undefined : [...bundles].reverse().find((b) => dir.startsWith(b.dir));
    if (!isMain && parent === undefined) continue;
    const node: BundleNode = {
      dir,
      relativeDir: dir.slice(appDir.length),
      kind: bundleKind(info.dict, dir),
      info,
      bundleId,
      executable,
      executableEntry,
      children: [],
      parent,
      hadProfile: byName.has(dir + PROFILE_FILE),
    };
    parent?.children.push(node);
    bundles.push(node);
  }
  const main = bundles.find((b) => b.dir === appDir);
  if (main === undefined) throw new SigningError('ipa_invalid', `${appDir}Info.plist has no CFBundleExecutable, so the app has no code to sign`);
  for (const bundle of bundles) bundle.children.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
  return { appDir, main, postOrder: postOrder(main), dropped, outside, appFiles, appDirectories, brokenBundles };
}

function postOrder(root: BundleNode): BundleNode[] {
  const out: BundleNode[] = [];
  const visit = (node: BundleNode): void => {
    for (const child of node.children) visit(child);
    out.push(node);
  };
  visit(root);
  return out;
}

async function readExecutableName(zip: ZipReader, entry: ZipEntry, isMain: boolean): Promise<string | undefined> {
  let info: InfoPlist;
  try {
    info = await readInfoPlist(zip, entry);
  } catch (error) {
    // A damaged Info.plist in a resource folder is a resource; in the app it is fatal.
    if (isMain || !(error instanceof SigningError) || error.code !== 'ipa_invalid') throw error;
    return undefined;
  }
  const name = stringValue(info.dict, 'CFBundleExecutable');
  if (name === undefined || name === '' || name.includes('/') || name === '..' || name === '.') return undefined;
  return name;
}

const infoCache = new WeakMap<ZipEntry, InfoPlist>();

export async function readInfoPlist(zip: ZipReader, entry: ZipEntry): Promise<InfoPlist> {
  const cached = infoCache.get(entry);
  if (cached !== undefined) return cached;
  const bytes = await zip.readEntry(entry, MAX_INFO_PLIST);
  let parsed;
  try {
    parsed = parsePlist(bytes);
  } catch (cause) {
    throw new SigningError('ipa_invalid', `${entry.name} is not a readable property list: ${(cause as Error).message}`, { cause, details: { path: entry.name } });
  }
  if (parsed.value.type !== 'dict') throw new SigningError('ipa_invalid', `${entry.name} is not a dictionary`, { details: { path: entry.name } });
  const info: InfoPlist = { entry, bytes, dict: parsed.value, format: parsed.format };
  infoCache.set(entry, info);
  return info;
}

export function stringValue(dict: PlistDict, key: string): string | undefined {
  const value = dict.value.get(key);
  return value?.type === 'string' ? value.value : undefined;
}

/** What the re-signer and the verifier report about the app, from its Info.plist. */
export function appSummary(info: PlistDict, bundleId: string): { bundleId: string; name: string | null; version: string | null; build: string | null } {
  return {
    bundleId,
    name: stringValue(info, 'CFBundleDisplayName') ?? stringValue(info, 'CFBundleName') ?? null,
    version: stringValue(info, 'CFBundleShortVersionString') ?? null,
    build: stringValue(info, 'CFBundleVersion') ?? null,
  };
}

/** Kinds that always carry code, by Info.plist or by the folder's extension. */
function isCodeBundle(kind: BundleKind, dir: string): boolean {
  return kind !== 'bundle' || /\.(app|appex|framework|xpc)\/$/.test(dir);
}

// CFBundlePackageType: APPL (apps), XPC! (XPC services), FMWK (frameworks), BNDL (loadable
// bundles); app extensions are APPL-less bundles with an NSExtension dictionary.
function bundleKind(dict: PlistDict, dir: string): BundleKind {
  if (dict.value.has('NSExtension') || dict.value.has('EXAppExtensionAttributes')) return 'appex';
  const type = stringValue(dict, 'CFBundlePackageType');
  if (type === 'APPL') return 'app';
  if (type === 'XPC!') return 'xpc';
  if (type === 'FMWK') return 'framework';
  if (type === 'BNDL') return 'bundle';
  // No package type: fall back to the directory's extension, as LaunchServices does.
  if (dir.endsWith('.appex/')) return 'appex';
  if (dir.endsWith('.app/')) return 'app';
  if (dir.endsWith('.xpc/')) return 'xpc';
  if (dir.endsWith('.framework/')) return 'framework';
  return 'bundle';
}
