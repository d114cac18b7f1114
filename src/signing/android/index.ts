// Signet's Android APK signing engine: apksigner-compatible signing (JAR v1, APK Signature Scheme
// v2 and v3 in one streaming pass) and verification (v1, v2, v3, v3.1). Formats, rules and sources:
// SPECIFICATION.md. Binary manifest parsing lives in ./axml.
//
//   const identity = await loadIdentity(keystore, { password, alias });       // src/signing/cms
//   const result = await signApk(source, sink, { identity, v1SignerName: v1SignerNameFor(...) });
//   const report = await verifyApk(FileSource.open(out), { minSdk? });       // report.verified
//
// Errors: SigningError apk_invalid | apk_signature_invalid | key_type_unsupported |
// key_certificate_mismatch | certificate_invalid | manifest_invalid | zip_* (from the zip reader).
export { signApk, type ApkSchemes, type SignApkOptions, type SignApkResult } from './sign/sign-apk.ts';
export type { KeyRotation } from './sign/apk-signatures.ts';
export { verifyApk, type VerifyApkOptions } from './verify/verify-apk.ts';
export type { ApkVerification, Issue, SchemeName, SchemeStatus, SignerReport } from './verify/report.ts';
export { openApk, readManifestFacts, type ManifestFacts, type OpenedApk } from './apk/open.ts';
export { safeSignerName } from './v1/entries.ts';
export { parseLineageFile, type LineageNode } from './lineage/lineage.ts';

/**
 * apksigner's default v1 signer name: the keystore alias, else the key file's name up to its
 * first dot ("rsa-2048.pk8" -> "rsa-2048"), else "CERT". signApk sanitises it (RSA-2048).
 */
export function v1SignerNameFor(alias: string | undefined, keyFileName: string | undefined): string {
  if (alias !== undefined && alias !== '') return alias;
  if (keyFileName !== undefined && keyFileName !== '') {
    const base = keyFileName.slice(keyFileName.lastIndexOf('/') + 1);
    const dot = base.indexOf('.');
    const name = dot === -1 ? base : base.slice(0, dot);
    if (name !== '') return name;
  }
  return 'CERT';
}
