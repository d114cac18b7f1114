// Which profile signs which bundle, checked before any work is done (ios-signing.md §11, §17 row
// 0xe8008015): every provisioned bundle (app, extension, watch app, app clip, XPC service with a
// profile) needs a profile covering its final bundle id, unexpired, listing the signing
// certificate, with the certificate itself valid. Frameworks carry no profile.
import { SigningError } from '../../errors.ts';
import type { PlistDict } from '../../plist/index.ts';
import { checkProfileForSigning, deriveEntitlements, selectProfileForBundle, type ProvisioningProfile } from '../profile/index.ts';
import { isProvisioned, type BundleNode, type IpaLayout } from '../bundle/index.ts';
import type { InfoPlan } from './overrides.ts';
import type { ResignOptions } from './options.ts';

export function assignProfiles(layout: IpaLayout, infos: Map<BundleNode, InfoPlan>, options: ResignOptions, now: Date): Map<BundleNode, ProvisioningProfile> {
  const assigned = new Map<BundleNode, ProvisioningProfile>();
  const uncovered: { bundleId: string; path: string; where: string }[] = [];
  for (const bundle of layout.postOrder) {
    if (!isProvisioned(bundle)) continue;
    const bundleId = infos.get(bundle)!.bundleId;
    const profile = options.profileByBundleId?.get(bundleId) ?? selectProfileForBundle(options.profiles, bundleId, now);
    if (profile === undefined) uncovered.push({ bundleId, path: bundle.dir, where: bundle.relativeDir === '' ? 'the app' : bundle.relativeDir });
    else assigned.set(bundle, profile);
  }
  // Every uncovered bundle is named at once: the caller fixes its profiles in one go.
  if (uncovered.length > 0) {
    const offered = [...options.profiles, ...(options.profileByBundleId?.values() ?? [])].map((p) => p.applicationIdentifier);
    throw new SigningError('bundle_id_mismatch', `No provisioning profile covers ${uncovered.map((u) => `"${u.bundleId}" (${u.where})`).join(', ')}; profiles given: ${offered.join(', ') || 'none'}`, {
      details: { bundleId: uncovered[0]!.bundleId, path: uncovered[0]!.path, bundles: uncovered.map((u) => ({ bundleId: u.bundleId, path: u.path })), profiles: offered },
    });
  }
  // A profile named for a bundle id the app does not have is a typo, not something to ignore.
  const present = new Set([...assigned.keys()].map((b) => infos.get(b)!.bundleId));
  const unused = [...(options.profileByBundleId?.keys() ?? [])].filter((id) => !present.has(id));
  if (unused.length > 0) {
    throw new SigningError('bundle_id_mismatch', `A profile is named for ${unused.map((id) => `"${id}"`).join(', ')}, but the app has no such bundle (its bundles: ${[...present].join(', ')})`, {
      details: { bundleId: unused[0], unknown: unused, bundles: [...present] },
    });
  }
  for (const [bundle, profile] of assigned) checkProfileForSigning(profile, { bundleId: infos.get(bundle)!.bundleId, certificate: options.identity.certificate, now });
  return assigned;
}

/** `--entitlements`: every requested key must be granted by the main app's profile. */
export function checkRequestedEntitlements(layout: IpaLayout, infos: Map<BundleNode, InfoPlan>, profiles: Map<BundleNode, ProvisioningProfile>, requested: PlistDict): void {
  const profile = profiles.get(layout.main);
  if (profile === undefined || !isProvisioned(layout.main)) return;
  const derived = deriveEntitlements({ profile, bundleId: infos.get(layout.main)!.bundleId, original: requested });
  if (derived.dropped.length > 0) {
    throw new SigningError('entitlements_not_granted', `Profile "${profile.name}" does not grant ${derived.dropped.map((d) => `${d.key} (${d.reason})`).join(', ')}`, {
      details: { dropped: derived.dropped },
    });
  }
}
