// The .ipa re-signer (pure engine: DataSource in, DataSink out). See ../SPECIFICATION.md,
// "Re-signing pipeline".
export { resignIpa, resignIpaProved } from './resign-ipa.ts';
export type { CopiedEntry, ResignProof } from './proof.ts';
export type { ResignOptions, ResignOverrides, ResignResult, ResignedBundle } from './options.ts';
export { readProvisionedBundles, type ProvisionedBundle } from './app-entitlements.ts';
