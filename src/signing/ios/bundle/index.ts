// The bundle model of an .ipa: app, nested bundles (found by content), leaf-first order.
export { appSummary, discoverLayout, openIpa, readInfoPlist, stringValue, type DiscoverOptions } from './discover.ts';
export { CODE_RESOURCES_FILE, describeBrokenBundle, isProvisioned, owningBundle, PROFILE_FILE, type BrokenBundle, type BundleKind, type BundleNode, type InfoPlist, type IpaLayout } from './model.ts';
