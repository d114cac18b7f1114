// inspectPackage: what an uploaded file IS — platform (from the zip's content, never the file
// name), identity, SDK/OS levels and icon. One entry point for upload validation, task records,
// `signet inspect` and install pages. Every refusal is SigningError('invalid_package') with
// `details.reason` (see InvalidPackageReason) and a message that says what is wrong.
import { isDroppedUnread } from '../android/apk/open.ts';
import type { DataSource } from '../data-source.ts';
import { SigningError } from '../errors.ts';
import { ZipReader } from '../zip/index.ts';
import { inspectAndroid } from './android.ts';
import { detectPlatform } from '../package/detect.ts';
import { inspectIos } from './ios.ts';
import { refuse } from '../package/refuse.ts';
import type { InspectOptions, PackageInfo } from './types.ts';

export type {
  AndroidPackageInfo, InspectOptions, InvalidPackageReason, IosPackageInfo, PackageIcon, PackageInfo,
} from './types.ts';
export { readPngHeader, type PngHeader } from './png-header.ts';
export { packageInfoJson, type PackageInfoJson } from './json.ts';

/** Reads the package behind `source` (the caller owns and closes it). */
export async function inspectPackage(source: DataSource, options: InspectOptions = {}): Promise<PackageInfo> {
  try {
    const zip = await openZip(source);
    const detected = detectPlatform(zip.entries);
    return detected.platform === 'ios'
      ? await inspectIos(zip, detected.appPath, options)
      : await inspectAndroid(zip, options);
  } catch (error) {
    // Zip damage found while reading an entry (CRC, truncation, bomb limits) is also "not a
    // readable package"; the original code stays in details.cause.
    if (error instanceof SigningError && error.code.startsWith('zip_')) {
      throw refuse('zip_rejected', `the archive cannot be read: ${error.message}`, { cause: error, details: { cause: error.code } });
    }
    throw error;
  }
}

async function openZip(source: DataSource): Promise<ZipReader> {
  try {
    return await ZipReader.open(source);
  } catch (error) {
    if (!(error instanceof SigningError)) throw error;
    // An APK is held to the rules of its re-sign: the entries the signer drops unread (old JAR
    // signature files) may be odd without making the APK unsignable (android/apk/open.ts).
    const asApk = await openAndroidForSigning(source);
    if (asApk !== null) return asApk;
    const reason = error.code === 'zip_invalid' ? 'not_a_zip' : 'zip_rejected';
    const message = reason === 'not_a_zip' ? `not a readable zip archive: ${error.message}` : `the zip archive is refused: ${error.message}`;
    throw refuse(reason, message, { cause: error, details: { cause: error.code } });
  }
}

/** The archive opened as the APK signer opens it, or null if that fails too or it is not an APK. */
async function openAndroidForSigning(source: DataSource): Promise<ZipReader | null> {
  let zip: ZipReader;
  try {
    zip = await ZipReader.open(source, { discarded: isDroppedUnread });
  } catch (error) {
    if (error instanceof SigningError) return null;
    throw error;
  }
  try {
    return detectPlatform(zip.entries).platform === 'android' ? zip : null;
  } catch (error) {
    if (error instanceof SigningError) return null;
    throw error;
  }
}
