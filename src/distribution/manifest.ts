// The itms-services manifest (Apple's ManifestURL schema, distribution-protocols.md §1.2): one
// item, a software-package asset and, when the app has an icon, the display/full-size images.
// `bundle-identifier` must be the RE-SIGNED app's CFBundleIdentifier or iOS refuses the install.
import { plistFromJs, writePlist } from '../signing/plist/index.ts';

export interface ManifestInput {
  ipaUrl: string;
  ipaSha256: string | null;
  iconUrl: string | null;
  bundleId: string;
  version: string | null;
  title: string;
}

export function buildManifest(input: ManifestInput): Buffer {
  const assets: Array<Record<string, string>> = [
    { kind: 'software-package', url: input.ipaUrl, ...(input.ipaSha256 ? { sha256: input.ipaSha256 } : {}) },
  ];
  if (input.iconUrl) {
    assets.push({ kind: 'display-image', url: input.iconUrl }, { kind: 'full-size-image', url: input.iconUrl });
  }
  const metadata: Record<string, string> = { 'bundle-identifier': input.bundleId };
  if (input.version) metadata['bundle-version'] = input.version;
  metadata.kind = 'software';
  metadata.title = input.title;
  return writePlist(plistFromJs({ items: [{ assets, metadata }] }), 'xml');
}

/** The link Safari hands to iOS; the manifest URL is percent-encoded so its own query survives. */
export function itmsServicesUrl(manifestUrl: string): string {
  return `itms-services://?action=download-manifest&url=${encodeURIComponent(manifestUrl)}`;
}
