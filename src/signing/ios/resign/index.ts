// The .ipa re-signer (pure engine: DataSource in, DataSink out). See ../SPECIFICATION.md,
// "Re-signing pipeline".
export { resignIpa } from './resign-ipa.ts';
export type { ResignOptions, ResignOverrides, ResignResult, ResignedBundle } from './options.ts';
export { readProvisionedBundles, type ProvisionedBundle } from './app-entitlements.ts';
