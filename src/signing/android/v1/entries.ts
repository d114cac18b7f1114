// Which zip entries JAR signing covers, and the names of the files it writes (apksig
// V1SchemeSigner.isJarEntryDigestNeededInManifest, getSafeSignerName, V1SchemeConstants).
import { SigningError } from '../../errors.ts';

export const MANIFEST_ENTRY_NAME = 'META-INF/MANIFEST.MF';
const META_INF = 'META-INF/';

/**
 * JAR File Specification "Signed JAR File": directories are not listed; files directly in
 * META-INF named MANIFEST.MF, *.SF, *.RSA, *.DSA, *.EC or SIG-* (case-insensitive) are signature
 * files; everything else - subdirectories of META-INF included - is digested.
 */
export function isDigestedEntry(name: string): boolean {
  if (name.endsWith('/')) return false;
  if (!name.startsWith(META_INF)) return true;
  if (name.indexOf('/', META_INF.length) !== -1) return true;
  const file = name.slice(META_INF.length).toLowerCase();
  return !(file === 'manifest.mf' || file.endsWith('.sf') || file.endsWith('.rsa') || file.endsWith('.dsa') || file.endsWith('.ec') || file.startsWith('sig-'));
}

/** A signature block file directly under META-INF (what a re-sign drops and a verifier reads). */
export function isSignatureBlockName(name: string): boolean {
  if (!name.startsWith(META_INF) || name.indexOf('/', META_INF.length) !== -1) return false;
  const file = name.slice(META_INF.length).toLowerCase();
  return file.endsWith('.rsa') || file.endsWith('.dsa') || file.endsWith('.ec');
}

/**
 * apksig V1SchemeSigner.getSafeSignerName: upper case, at most 8 characters, anything outside
 * [A-Z0-9_-] becomes "_" (the JAR specification's rule for signature file names).
 */
export function safeSignerName(name: string): string {
  if (name.length === 0) throw new SigningError('apk_invalid', 'the v1 signer name is empty');
  let result = '';
  for (const c of [...name.toUpperCase()].slice(0, 8)) result += /^[A-Z0-9_-]$/.test(c) ? c : '_';
  return result;
}

/** apksig V1SchemeSigner.checkEntryNameValid: CR, LF and NUL cannot appear in a manifest. */
export function checkEntryNameForManifest(name: string): void {
  for (const c of ['\r', '\n', '\0']) {
    if (name.includes(c)) {
      throw new SigningError('apk_invalid', `entry name ${JSON.stringify(name)} contains character 0x${c.charCodeAt(0).toString(16)}, which a JAR manifest cannot hold`, { details: { name } });
    }
  }
}

export type JarDigest = 'sha1' | 'sha256';

/**
 * apksig V1SchemeSigner.getSuggestedSignatureDigestAlgorithm: SHA-1 where older platforms cannot
 * verify SHA-256 with that key type (RSA before API 18, DSA before 21); ECDSA before API 18 is
 * impossible.
 */
export function jarDigestFor(keyType: string, minSdk: number): JarDigest {
  if (keyType === 'rsa') return minSdk < 18 ? 'sha1' : 'sha256';
  if (keyType === 'dsa') return minSdk < 21 ? 'sha1' : 'sha256';
  if (keyType === 'ec') {
    if (minSdk < 18) {
      throw new SigningError('key_type_unsupported', `ECDSA v1 (JAR) signatures need minSdkVersion 18 or higher; this APK declares ${minSdk}`, { details: { minSdk } });
    }
    return 'sha256';
  }
  throw new SigningError('key_type_unsupported', `${keyType} keys cannot sign JAR (v1) signatures`);
}

/** Attribute names for a digest: "SHA-256-Digest", "SHA1-Digest" (apksig getEntryDigestAttributeName). */
export function digestAttributeName(digest: JarDigest): string {
  return digest === 'sha1' ? 'SHA1-Digest' : 'SHA-256-Digest';
}
