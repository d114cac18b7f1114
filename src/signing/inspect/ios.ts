// An .ipa's identity from Payload/<Name>.app/Info.plist, and its home-screen icon.
import { SigningError } from '../errors.ts';
import { parsePlist, type PlistDict, type PlistValue } from '../plist/index.ts';
import type { ZipReader } from '../zip/index.ts';
import { findIosIcon } from './ios-icon.ts';
import { refuse } from '../package/refuse.ts';
import type { InspectOptions, IosPackageInfo } from './types.ts';

/** Info.plist files are a few kilobytes; a larger one is not read into memory. */
export const MAX_INFO_PLIST_BYTES = 4 * 1024 * 1024;

export async function inspectIos(zip: ZipReader, appPath: string, options: InspectOptions): Promise<IosPackageInfo> {
  const plistPath = `${appPath}Info.plist`;
  const entry = zip.getEntry(plistPath)!;
  // Zip damage (CRC, size) propagates as such; only a bad plist is "unreadable Info.plist".
  const bytes = await zip.readEntry(entry, MAX_INFO_PLIST_BYTES);
  let info: PlistValue;
  try {
    info = parsePlist(bytes).value;
  } catch (error) {
    if (!(error instanceof SigningError)) throw error;
    throw refuse('info_plist_unreadable', `${plistPath} cannot be read: ${error.message}`, { cause: error, details: { cause: error.code } });
  }
  if (info.type !== 'dict') throw refuse('info_plist_unreadable', `${plistPath} is a ${info.type}, not a dictionary`);

  const bundleId = str(info, 'CFBundleIdentifier');
  if (bundleId === null || bundleId === '') {
    throw refuse('info_plist_incomplete', `${plistPath} has no CFBundleIdentifier`);
  }
  const executable = str(info, 'CFBundleExecutable');
  const icon = await findIosIcon(zip, appPath, info, options.iconBytes !== false);
  return {
    platform: 'ios',
    appPath,
    bundleId,
    // The home-screen name: CFBundleDisplayName, else CFBundleName (Apple "Information Property
    // List Key Reference"); localized InfoPlist.strings are not consulted.
    name: nonEmpty(str(info, 'CFBundleDisplayName')) ?? nonEmpty(str(info, 'CFBundleName')) ?? executable,
    version: str(info, 'CFBundleShortVersionString'),
    build: str(info, 'CFBundleVersion'),
    minOs: str(info, 'MinimumOSVersion'),
    executable,
    deviceFamily: array(info, 'UIDeviceFamily').flatMap((v) => (v.type === 'integer' ? [Number(v.value)] : v.type === 'string' && /^\d+$/.test(v.value) ? [Number(v.value)] : [])),
    supportedPlatforms: array(info, 'CFBundleSupportedPlatforms').flatMap((v) => (v.type === 'string' ? [v.value] : [])),
    icon: icon.icon,
    iconIssue: icon.issue,
  };
}

/** A string value; numbers are accepted too (some build tools write CFBundleVersion as <integer>). */
export function str(dict: PlistDict, key: string): string | null {
  const value = dict.value.get(key);
  if (value?.type === 'string') return value.value;
  if (value?.type === 'integer') return value.value.toString();
  if (value?.type === 'real') return String(value.value);
  return null;
}

export function array(dict: PlistDict, key: string): PlistValue[] {
  const value = dict.value.get(key);
  return value?.type === 'array' ? value.value : [];
}

function nonEmpty(value: string | null): string | null {
  return value === null || value.trim() === '' ? null : value;
}
