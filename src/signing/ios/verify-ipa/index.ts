// Whole-app .ipa verifier. See ../SPECIFICATION.md, "Verifying a whole app".
export { verifyIpa, assertIpaVerified, type VerifyIpaOptions } from './verify-ipa.ts';
export { allProblems, describeIpaVerification, type BundleVerification, type CodeVerification, type IpaVerification } from './report.ts';
export { verifyWritten } from './verify-written.ts';
