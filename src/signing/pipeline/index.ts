// The signing pipeline: one entry point that signs a package and proves it (sign-package.ts).
export { signPackage, signPackageFile, signPackageToFile } from './sign-package.ts';
export { FileOutput, MemoryOutput, type VerifiableSink } from './output.ts';
export { openSigningIdentity, settingsCaCertificates } from './identity.ts';
export { FIRST_V2_SDK } from './constants.ts';
export type * from './types.ts';
