// The pure half of per-bundle profile choice: which profiles are candidates for App ID matching,
// which are pinned to a bundle id (a task's choice, `--profile ID=FILE`), and, after signing, which
// of the caller's profiles signed which bundle and which entitlements were left out. The matching
// itself (explicit App ID before wildcard) is the re-signer's (ios/resign/profiles.ts); looking
// profiles up in a database is the caller's.
import { parseProvisioningProfile, type ProvisioningProfile } from '../ios/profile/index.ts';
import type { ResignResult } from '../ios/resign/index.ts';
import type { IosProfileInput, SignedBundle, SigningWarning } from './types.ts';
import { toBuffer } from './bytes.ts';

export interface ProfileChoice {
  parsed: Array<{ id: string | null; profile: ProvisioningProfile }>;
  /** Candidates every bundle is matched against. */
  candidates: ProvisioningProfile[];
  /** Explicit profile per (final) bundle id, winning over matching. */
  pinned: Map<string, ProvisioningProfile>;
}

export function chooseProfiles(inputs: readonly IosProfileInput[]): ProfileChoice {
  const parsed = inputs.map((input) => ({ input, profile: parseProvisioningProfile(toBuffer(input.bytes)) }));
  const pinned = new Map<string, ProvisioningProfile>();
  for (const { input, profile } of parsed) for (const bundleId of input.pinnedTo ?? []) pinned.set(bundleId, profile);
  return {
    parsed: parsed.map(({ input, profile }) => ({ id: input.id, profile })),
    candidates: parsed.filter(({ input }) => input.matchOthers ?? true).map(({ profile }) => profile),
    pinned,
  };
}

/** Which of the caller's profiles signed which bundle. */
export function signedBundles(result: ResignResult, profiles: ProfileChoice['parsed']): SignedBundle[] {
  return result.bundles.flatMap((bundle): SignedBundle[] => {
    if (!bundle.profile) return [];
    const used = profiles.find((p) => p.profile.uuid === bundle.profile!.uuid);
    return [
      {
        path: bundle.path,
        bundleId: bundle.bundleId,
        applicationIdentifier: bundle.profile.applicationIdentifier,
        profile: { id: used?.id ?? null, name: bundle.profile.name, uuid: bundle.profile.uuid, type: used?.profile.type ?? 'unknown', expiresAt: bundle.profile.expiresAt },
        capabilities: [],
      },
    ];
  });
}

/** The entitlements each bundle's profile did not grant, with the reason. */
export function leftOut(result: ResignResult): SigningWarning[] {
  return result.bundles.flatMap((bundle) =>
    bundle.droppedEntitlements.map((dropped) => ({
      code: 'entitlement_left_out' as const,
      message: `${dropped.key} left out of ${bundle.bundleId}: its profile ${dropped.reason === 'not_granted' ? 'does not grant it' : dropped.reason === 'value_not_granted' ? 'grants other values' : 'grants "*" and the app had no value to keep'}`,
      bundleId: bundle.bundleId,
      entitlement: dropped.key,
      reason: dropped.reason,
    })),
  );
}
