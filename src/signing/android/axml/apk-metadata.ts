// One call from an APK's manifest + resources.arsc + files to what an install page shows.
import { resolveLauncherIcon, type AndroidIcon, type ResourceFiles } from './icon.ts';
import { readManifest, type ManifestInfo } from './manifest.ts';
import { ResourceTable } from './resource-table.ts';
import { parseAxml } from './xml-parser.ts';

export interface ApkMetadata extends Omit<ManifestInfo, 'iconCandidates'> {
  readonly icon: AndroidIcon | null;
  /** Why `icon` is null (no icon declared, only vector drawables, file missing, ...). */
  readonly iconIssue: string | null;
  readonly iconVectorOnly: boolean;
  /** False when the APK has no resources.arsc (labels and icons given as references stay unresolved). */
  readonly hasResourceTable: boolean;
}

export interface ApkMetadataInput {
  /** The binary AndroidManifest.xml. */
  readonly manifest: Buffer;
  /** resources.arsc, or null when the APK has none. */
  readonly resources: Buffer | null;
  /** Access to the APK's other files, for the icon. */
  readonly files: ResourceFiles;
  /** Skip icon resolution (and its file reads), e.g. for upload validation. Default true. */
  readonly resolveIcon?: boolean;
}

/** Parses the manifest and resource table. Throws SigningError manifest_invalid when either is malformed. */
export async function readApkMetadata(input: ApkMetadataInput): Promise<ApkMetadata> {
  const doc = parseAxml(input.manifest);
  const table = input.resources === null ? null : ResourceTable.parse(input.resources);
  const { iconCandidates, ...manifest } = readManifest(doc, table);
  const icon = input.resolveIcon === false
    ? { icon: null, issue: 'icon not requested', vectorOnly: false }
    : await resolveLauncherIcon(table, iconCandidates, input.files);
  return { ...manifest, icon: icon.icon, iconIssue: icon.issue, iconVectorOnly: icon.vectorOnly, hasResourceTable: table !== null };
}
