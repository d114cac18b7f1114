// The app icon of an iOS bundle. Xcode copies the phone/pad sizes to the bundle root as
// AppIcon60x60@2x.png etc. and lists their base names in Info.plist:
// CFBundleIcons[~ipad] → CFBundlePrimaryIcon → CFBundleIconFiles, legacy CFBundleIconFiles and
// CFBundleIconFile (Apple "Information Property List Key Reference"). We take every root PNG
// those names match (with @2x/@3x and ~ipad/~iphone suffixes), plus any AppIcon*.png, and keep
// the largest by pixel size. The bytes are usually Apple CgBI PNGs; `cgbi` says so.
// With no loose PNG (Xcode 14+ single-size icons, or a bundle stripped of them) the icon is read
// from the compiled asset catalog, Assets.car at the bundle root: the facet named by
// CFBundlePrimaryIcon → CFBundleIconName (default "AppIcon"), largest iPhone/iPad rendition,
// converted to a standard PNG (see ../ios/assets-car/SPECIFICATION.md).
import { MAX_ICON_BYTES } from '../package/icon.ts';
import { SigningError } from '../errors.ts';
import { readCatalogAppIcon } from '../ios/assets-car/index.ts';
import type { PlistDict, PlistValue } from '../plist/index.ts';
import type { ZipReader } from '../zip/index.ts';
import { readPngHeader } from './png-header.ts';
import type { PackageIcon } from './types.ts';

/** Same size bound as Android icons (MAX_ICON_BYTES); nor are more than this many files read. */
const MAX_CANDIDATES = 32;
const SUFFIXES = /(@[23]x)?(~ipad|~iphone)?(\.png)?$/i;

export async function findIosIcon(zip: ZipReader, appPath: string, info: PlistDict, withBytes: boolean): Promise<{ icon: PackageIcon | null; issue: string | null }> {
  const baseNames = declaredIconNames(info);
  const rootFiles = zip.entries.filter((e) => !e.isDirectory && e.name.startsWith(appPath) && !e.name.slice(appPath.length).includes('/'));
  const candidates = rootFiles.filter((e) => {
    const file = e.name.slice(appPath.length);
    if (!/\.png$/i.test(file)) return false;
    if (/^AppIcon.*\.png$/i.test(file)) return true;
    const stem = file.replace(SUFFIXES, '').toLowerCase();
    return baseNames.has(stem);
  });
  if (candidates.length === 0) {
    const looseIssue = baseNames.size === 0
      ? 'Info.plist names no icon files and the bundle has no AppIcon*.png'
      : `Info.plist names icon files (${[...baseNames].slice(0, 4).join(', ')}) but none is a PNG at the top of ${appPath}`;
    return catalogIcon(zip, appPath, info, withBytes, looseIssue);
  }
  let best: { path: string; bytes: Buffer; width: number | null; height: number | null; cgbi: boolean; area: number } | null = null;
  // Bigger files are likelier to be bigger images; read those first and only so many.
  const byDeclaredSize = candidates.filter((e) => e.uncompressedSize <= MAX_ICON_BYTES)
    .sort((a, b) => b.uncompressedSize - a.uncompressedSize).slice(0, MAX_CANDIDATES);
  for (const entry of byDeclaredSize) {
    const bytes = await zip.readEntry(entry, MAX_ICON_BYTES);
    const header = readPngHeader(bytes);
    if (header === null) continue;
    const area = header.width * header.height;
    if (best === null || area > best.area || (area === best.area && bytes.length > best.bytes.length)) {
      best = { path: entry.name, bytes, width: header.width, height: header.height, cgbi: header.cgbi, area };
    }
  }
  if (best === null) return catalogIcon(zip, appPath, info, withBytes, `none of the icon candidates in ${appPath} is a readable PNG`);
  return {
    icon: { path: best.path, format: 'png', cgbi: best.cgbi, width: best.width, height: best.height, bytes: withBytes ? best.bytes : null, source: 'bundle', density: null },
    issue: null,
  };
}

/**
 * Assets.car is at most this big to be read for its icon; catalogs of large games run to hundreds
 * of megabytes, and the whole catalog is read into memory.
 */
export const MAX_ASSET_CATALOG_BYTES = 128 * 1024 * 1024;

/** The icon from `<app>/Assets.car`, or an issue that says why there is none. */
async function catalogIcon(zip: ZipReader, appPath: string, info: PlistDict, withBytes: boolean, looseIssue: string): Promise<{ icon: PackageIcon | null; issue: string | null }> {
  const path = `${appPath}Assets.car`;
  const entry = zip.getEntry(path);
  if (entry === undefined) return { icon: null, issue: `${looseIssue}, and there is no Assets.car` };
  if (entry.uncompressedSize > MAX_ASSET_CATALOG_BYTES) {
    return { icon: null, issue: `${looseIssue}, and Assets.car (${entry.uncompressedSize} bytes) is larger than the ${MAX_ASSET_CATALOG_BYTES} bytes Signet reads for an icon` };
  }
  const iconName = primaryIconName(info);
  const bytes = await zip.readEntry(entry, MAX_ASSET_CATALOG_BYTES);
  try {
    const found = readCatalogAppIcon(bytes, iconName, withBytes);
    if (found === null) return { icon: null, issue: `${looseIssue}, and Assets.car has no "${iconName}" app icon` };
    return {
      icon: { path, format: 'png', cgbi: false, width: found.width, height: found.height, bytes: found.png, source: 'asset-catalog', density: null },
      issue: null,
    };
  } catch (error) {
    // An unreadable catalog costs the icon, never the upload: the reason is reported instead.
    if (!(error instanceof SigningError)) throw error;
    return { icon: null, issue: `${looseIssue}, and the "${iconName}" icon in Assets.car cannot be read (${error.code}: ${error.message})` };
  }
}

/** CFBundleIcons[~ipad] → CFBundlePrimaryIcon → CFBundleIconName, else Xcode's default "AppIcon". */
function primaryIconName(info: PlistDict): string {
  for (const key of ['CFBundleIcons', 'CFBundleIcons~ipad']) {
    const icons = info.value.get(key);
    const primary = icons?.type === 'dict' ? icons.value.get('CFBundlePrimaryIcon') : undefined;
    const name = primary?.type === 'dict' ? primary.value.get('CFBundleIconName') : undefined;
    if (name?.type === 'string' && name.value !== '') return name.value;
  }
  return 'AppIcon';
}

/** Lower-cased base names ("appicon60x60") from every icon key of Info.plist. */
function declaredIconNames(info: PlistDict): Set<string> {
  const names = new Set<string>();
  const addStrings = (value: PlistValue | undefined): void => {
    if (value?.type === 'string') names.add(value.value.replace(SUFFIXES, '').toLowerCase());
    if (value?.type === 'array') for (const item of value.value) addStrings(item);
  };
  for (const key of ['CFBundleIcons', 'CFBundleIcons~ipad']) {
    const icons = info.value.get(key);
    const primary = icons?.type === 'dict' ? icons.value.get('CFBundlePrimaryIcon') : undefined;
    if (primary?.type === 'dict') addStrings(primary.value.get('CFBundleIconFiles'));
  }
  addStrings(info.value.get('CFBundleIconFiles'));
  addStrings(info.value.get('CFBundleIconFile'));
  names.delete('');
  return names;
}
