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
  for (const bundle of layout.postOrder) {
    if (!isProvisioned(bundle)) continue;
    const bundleId = infos.get(bundle)!.bundleId;
    const profile = options.profileByBundleId?.get(bundleId) ?? selectProfileForBundle(options.profiles, bundleId);
    if (profile === undefined) {
      const offered = [...options.profiles, ...(options.profileByBundleId?.values() ?? [])].map((p) => p.applicationIdentifier);
      throw new SigningError('bundle_id_mismatch', `No provisioning profile covers "${bundleId}" (${bundle.relativeDir === '' ? 'the app' : bundle.relativeDir}); profiles given: ${offered.join(', ') || 'none'}`, {
        details: { bundleId, path: bundle.dir, profiles: offered },
      });
    }
    checkProfileForSigning(profile, { bundleId, certificate: options.identity.certificate, now });
    assigned.set(bundle, profile);
  }
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
