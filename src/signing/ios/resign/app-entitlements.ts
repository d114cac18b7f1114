// What each provisioned bundle of an .ipa (the app, its extensions, watch app, app clip) is
// signed with today: its bundle id and the entitlements of its executable's current signature.
// A signing plan reads this before any profile exists, e.g. to ask for an App ID and the
// capabilities its entitlements need (ios-signing.md §13: the old slot 5 is what carries over).
// The executables are read once each, one at a time; nothing is verified here.
import type { DataSource } from '../../data-source.ts';
import type { PlistDict } from '../../plist/index.ts';
import { discoverLayout, isProvisioned, openIpa, type BundleKind } from '../bundle/index.ts';
import { existingEntitlements } from './existing-signature.ts';
import { readMachO } from './read-macho.ts';

export interface ProvisionedBundle {
  /** Zip path of the bundle, e.g. "Payload/A.app/PlugIns/W.appex/". */
  path: string;
  /** Path relative to the app ("" for the app itself). */
  relativeDir: string;
  kind: BundleKind;
  bundleId: string;
  /** Entitlements of the current signature; absent when the executable has none readable. */
  entitlements?: PlistDict;
}

/** The provisioned bundles, the app first, then nested ones in zip-path order. */
export async function readProvisionedBundles(source: DataSource, signal?: AbortSignal): Promise<ProvisionedBundle[]> {
  const zip = await openIpa(source);
  const layout = await discoverLayout(zip);
  const bundles = layout.postOrder.filter(isProvisioned).sort((a, b) => (a === layout.main ? -1 : b === layout.main ? 1 : a.dir < b.dir ? -1 : 1));
  const out: ProvisionedBundle[] = [];
  for (const bundle of bundles) {
    signal?.throwIfAborted();
    const entitlements = existingEntitlements(await readMachO(zip, bundle.executableEntry));
    out.push({ path: bundle.dir, relativeDir: bundle.relativeDir, kind: bundle.kind, bundleId: bundle.bundleId, ...(entitlements ? { entitlements } : {}) });
  }
  return out;
}
