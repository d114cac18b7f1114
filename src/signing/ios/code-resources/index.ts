// `_CodeSignature/CodeResources`: build (iOS rules), parse and check against a bundle's files.
// Format and sources: ../SPECIFICATION.md, "Bundles and CodeResources".
export { buildCodeResources, type BuildCodeResourcesOptions, type BuiltCodeResources } from './build.ts';
export { parseCodeResources, type ParsedCodeResources } from './parse.ts';
export { checkSeal, type SealCheckOptions, type SealProblem } from './verify.ts';
export { IOS_RULES, IOS_RULES2, RuleMatcher, isExcluded, type ResourceRule } from './rules.ts';
export type { BundleFile, CodeResourcesSeal, SealEntry } from './types.ts';
