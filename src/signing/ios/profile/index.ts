// Public API of provisioning profiles and entitlement derivation for the iOS re-signer
// (see SPECIFICATION.md in this folder).
export { parseProvisioningProfile, type ParseProfileOptions } from './parse.ts';
export {
  appIdPatternMatches,
  checkProfileForSigning,
  profileCoversBundleId,
  selectProfileForBundle,
  type ProfileCheckInput,
} from './checks.ts';
export { deriveEntitlements, grants, transferEntitlements, type DeriveEntitlementsInput, type DerivedEntitlements, type DropReason } from './entitlements.ts';
export type { ProfileCms, ProfileType, ProvisioningProfile, VerifyProfileSignature } from './types.ts';
