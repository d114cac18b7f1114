// Opening an APK for signing or verification: the zip structure (src/signing/zip), the APK
// Signing Block that may sit before the central directory, and the facts from the binary
// manifest that decide signing defaults (apksig ApkUtils.findZipSections, getMinSdkVersionFromApk).
import type { DataSource } from '../../data-source.ts';
import { SigningError } from '../../errors.ts';
import { ZipReader, type ZipEntry } from '../../zip/index.ts';
import { parseAxml, readManifest } from '../axml/index.ts';
import { findSigningBlock, type SigningBlockLookup } from '../block/parse.ts';

export const ANDROID_MANIFEST = 'AndroidManifest.xml';
// AndroidManifest.xml is small; anything bigger than this is not a real manifest.
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

export interface OpenedApk {
  readonly source: DataSource;
  readonly zip: ZipReader;
  readonly signingBlock: SigningBlockLookup;
  /** End of the "entries" section: the signing block's start, or the central directory's. */
  readonly entriesSectionEnd: number;
  /** apksig (V2/V3 verifiers): a gap between CD and EoCD means "no APK signature". */
  readonly centralDirectoryFollowedByEocd: boolean;
}

export async function openApk(source: DataSource): Promise<OpenedApk> {
  const zip = await ZipReader.open(source);
  const geometry = zip.geometry;
  // apksig has no Zip64 support: APK offsets are 32-bit.
  if (geometry.zip64EocdOffset !== null) throw new SigningError('zip_unsupported', 'APKs cannot use Zip64 (apksig reads 32-bit offsets only)');
  const signingBlock = await findSigningBlock(source, geometry.centralDirectoryOffset);
  const entriesSectionEnd = signingBlock.found ? signingBlock.block.offset : geometry.centralDirectoryOffset;
  if (signingBlock.found && geometry.entriesEnd > signingBlock.block.offset) {
    throw new SigningError('apk_invalid', 'zip entries overlap the APK Signing Block');
  }
  return {
    source,
    zip,
    signingBlock,
    entriesSectionEnd,
    centralDirectoryFollowedByEocd: geometry.centralDirectoryOffset + geometry.centralDirectorySize === geometry.eocdOffset,
  };
}

export interface ManifestFacts {
  readonly minSdk: number;
  readonly targetSdk: number | null;
  readonly packageName: string;
  readonly versionCode: number;
  readonly versionName: string | null;
}

/** apksig ApkUtils.getMinSdkVersionFromApk: "Missing AndroidManifest.xml" when there is none. */
export async function readManifestFacts(apk: OpenedApk): Promise<ManifestFacts> {
  const entry: ZipEntry | undefined = apk.zip.getEntry(ANDROID_MANIFEST);
  if (entry === undefined) throw new SigningError('apk_invalid', 'Missing AndroidManifest.xml');
  const info = readManifest(parseAxml(await apk.zip.readEntry(entry, MAX_MANIFEST_BYTES)), null);
  return {
    minSdk: info.minSdk.level,
    targetSdk: info.targetSdk?.level ?? null,
    packageName: info.packageName,
    versionCode: info.versionCode,
    versionName: info.versionName,
  };
}
