// The profile-level checks installd makes on a signed bundle (ios-signing.md §11, §13, §17):
// the embedded profile covers the bundle id, is valid now, lists the signing certificate, and
// grants every entitlement the main executable carries, with the exact application-identifier.
import { SigningError } from '../../errors.ts';
import type { PlistDict } from '../../plist/index.ts';
import { checkProfileForSigning, grants, type ProvisioningProfile } from '../profile/index.ts';

export function profileProblems(profile: ProvisioningProfile, bundleId: string, certificate: Buffer | undefined, entitlements: PlistDict | undefined, now: Date): string[] {
  const problems: string[] = [];
  if (certificate === undefined) problems.push('the main executable has no signer certificate to compare with the profile');
  else {
    try {
      checkProfileForSigning(profile, { bundleId, certificate, now });
    } catch (error) {
      if (!(error instanceof SigningError)) throw error;
      problems.push(`${error.message} (${error.code})`);
    }
  }
  if (entitlements === undefined) {
    problems.push('the main executable carries no entitlements (installd: "missing the application-identifier entitlement")');
    return problems;
  }
  const appId = entitlements.value.get('application-identifier');
  const expected = `${profile.appIdPrefix}.${bundleId}`;
  if (appId?.type !== 'string' || appId.value !== expected) {
    problems.push(`application-identifier is ${appId?.type === 'string' ? `"${appId.value}"` : 'missing'}, expected "${expected}"`);
  }
  for (const [key, value] of entitlements.value) {
    const grant = profile.entitlements.value.get(key);
    if (grant === undefined) problems.push(`entitlement ${key} is not granted by the profile`);
    else if (!grants(grant, value)) problems.push(`entitlement ${key} has a value the profile does not grant`);
  }
  return problems;
}
