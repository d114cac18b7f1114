// The bundle model of an .ipa: app, nested bundles (found by content), leaf-first order.
export { discoverLayout, openIpa, readInfoPlist, stringValue } from './discover.ts';
export { isProvisioned, owningBundle, type BundleKind, type BundleNode, type InfoPlist, type IpaLayout } from './model.ts';
