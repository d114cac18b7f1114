// Public surface of the AXML / resources.arsc reader. See SPECIFICATION.md for the format.
export { readApkMetadata, type ApkMetadata, type ApkMetadataInput } from './apk-metadata.ts';
export { resolveLauncherIcon, sniffRaster, MAX_ICON_BYTES, MAX_ICON_FILE_READS, type AndroidIcon, type IconFormat, type IconResult, type ResourceFiles } from './icon.ts';
export { readManifest, CUR_DEVELOPMENT, type ManifestInfo, type SdkLevel } from './manifest.ts';
export { ResourceTable, type ResVariant } from './resource-table.ts';
export { bestTextVariant, dereference, resolveText, resolveTextByLocale } from './resolve.ts';
export { parseAxml, findAttribute, ANDROID_NS, type XmlAttribute, type XmlDocument, type XmlElement } from './xml-parser.ts';
export type { ResConfig } from './config.ts';
export type { ResValue } from './res-value.ts';
