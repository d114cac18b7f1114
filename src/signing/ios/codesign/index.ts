// Public surface of the Mach-O code signer. The .ipa re-signer calls signMachO once per Mach-O
// file (from a worker pool) and verifyMachO on its output; import from here.
export { signMachO, type CodeSigner, type SignMachOOptions, type SignMachOResult, type SlotInput, type CmsProducer, type CodeDirectoryDigest } from './sign.ts';
export { openMachOStream, streamingSigner, type MachOStream, type MachOStreamInput, type MachOStreamSigner } from './sign-stream.ts';
export { identityCodeSigner, type IdentitySignerOptions } from './identity-signer.ts';
export { verifyMachO, assertValid, type VerifyMachOOptions, type VerifyReport, type SliceReport, type CodeDirectoryReport } from './verify.ts';
export { readCodeSignatures, type ExistingSignature } from './read-signature.ts';
export { designatedRequirementFor, appleDesignatedRequirement } from './designated-requirement.ts';
export { formatExpr, parseRequirements, serializeRequirements, type Expr } from './requirements.ts';
export { canonicalIdentifier, defaultIdentifier } from './identifier.ts';
export { digestSet, sliceNeedsSha1 } from './hash-agility.ts';
export { HASH_SHA1, HASH_SHA256, type HashType } from './digest.ts';
export { isMachO, parseMachO } from '../macho/parse.ts';
export { buildMachO } from '../macho/build.ts';
