// JAR (v1) verification as apksig V1SchemeVerifier does it: every signer's PKCS#7 block verifies
// over its .SF; the .SF vouches for MANIFEST.MF (whole-file digest, or per-section digests); the
// manifest lists every entry that must be protected, with digests of the uncompressed contents;
// X-Android-APK-Signed names the v2+ schemes whose removal must be detected. The entries'
// content digests are taken by the caller in its one pass over the file (content-pass.ts), so
// checking is split: checkV1 (everything else, and what to digest), then finishV1.
import { createHash } from 'node:crypto';
import { SigningError } from '../../errors.ts';
import type { OpenedApk } from '../apk/open.ts';
import { isDigestedEntry, isSignatureBlockName, MANIFEST_ENTRY_NAME } from '../v1/entries.ts';
import { getAttribute, parseManifest, type ManifestSection } from '../v1/manifest-parse.ts';
import { checkJarSignatureBlock } from './jar-signature-block.ts';
import type { Findings } from './report.ts';
import type { X509Certificate } from 'node:crypto';
import type { ZipEntry } from '../../zip/index.ts';

export interface V1Signer {
  readonly name: string;
  readonly certificate: X509Certificate;
  readonly certificateDer: Buffer;
  readonly digest: string;
}

export interface V1Check {
  readonly present: boolean;
  readonly ok: boolean;
  readonly signers: readonly V1Signer[];
  /** Scheme IDs listed in X-Android-APK-Signed by any signer. */
  readonly apkSchemeIds: ReadonlySet<number>;
  /** Entries whose content digests remain to be compared (finishV1), with the manifest's values. */
  readonly entries: readonly V1EntryCheck[];
}

export interface V1EntryCheck {
  readonly entry: ZipEntry;
  /** Node hash names and expected base64 values. */
  readonly digests: readonly { hash: string; value: string }[];
}

// JAR digest attribute prefixes and the first platform that verifies each (apksig
// V1SchemeVerifier.getMinSdkVersionFromWhichSupported).
const DIGESTS: readonly { prefix: string; hash: string; minSdk: number }[] = [
  { prefix: 'SHA-512', hash: 'sha512', minSdk: 18 },
  { prefix: 'SHA-384', hash: 'sha384', minSdk: 18 },
  { prefix: 'SHA-256', hash: 'sha256', minSdk: 18 },
  { prefix: 'SHA1', hash: 'sha1', minSdk: 1 },
  { prefix: 'SHA-1', hash: 'sha1', minSdk: 1 },
];
const MAX_META_FILE = 64 * 1024 * 1024;

/** The digests a section offers for an attribute suffix ("-Digest", "-Digest-Manifest"), usable at minSdk. */
function digestsOf(section: ManifestSection, suffix: string, minSdk: number): { hash: string; value: string }[] {
  const found: { hash: string; value: string }[] = [];
  for (const { prefix, hash, minSdk: since } of DIGESTS) {
    const value = getAttribute(section, `${prefix}${suffix}`);
    if (value !== undefined && since <= minSdk && !found.some((f) => f.hash === hash)) found.push({ hash, value });
  }
  return found;
}

function matches(digests: readonly { hash: string; value: string }[], data: Buffer): boolean {
  return digests.every(({ hash, value }) => createHash(hash).update(data).digest('base64') === value.trim());
}

export async function checkV1(apk: OpenedApk, minSdk: number, findings: Findings): Promise<V1Check> {
  const { zip } = apk;
  const apkSchemeIds = new Set<number>();
  const blocks = zip.entries.filter((entry) => isSignatureBlockName(entry.name));
  const manifestEntry = zip.getEntry(MANIFEST_ENTRY_NAME);
  const present = blocks.length > 0 || manifestEntry !== undefined;
  const fail = (message: string): V1Check => {
    findings.error('v1', message);
    return { present, ok: false, signers: [], apkSchemeIds, entries: [] };
  };
  if (manifestEntry === undefined) return fail('Missing META-INF/MANIFEST.MF');
  if (blocks.length === 0) return fail('No JAR signatures');
  const manifestBytes = await zip.readEntry(manifestEntry, MAX_META_FILE);
  let manifest;
  try {
    manifest = parseManifest(manifestBytes, 'META-INF/MANIFEST.MF');
  } catch (error) {
    if (error instanceof SigningError) return fail(error.message);
    throw error;
  }
  const sections = new Map<string, ManifestSection>();
  for (const section of manifest.sections) {
    if (sections.has(section.name)) return fail(`META-INF/MANIFEST.MF has a duplicate section for ${JSON.stringify(section.name)}`);
    sections.set(section.name, section);
  }

  let ok = true;
  const signers: V1Signer[] = [];
  for (const blockEntry of blocks) {
    const base = blockEntry.name.slice(0, blockEntry.name.lastIndexOf('.'));
    const sfEntry = zip.entries.find((entry) => entry.name.toLowerCase() === `${base}.sf`.toLowerCase());
    const signerName = base.slice('META-INF/'.length);
    const signerFail = (message: string): void => {
      findings.error('v1', `${signerName}: ${message}`);
      ok = false;
    };
    if (sfEntry === undefined) {
      signerFail(`signature block ${blockEntry.name} has no matching .SF file`);
      continue;
    }
    const sf = await zip.readEntry(sfEntry, MAX_META_FILE);
    const block = await zip.readEntry(blockEntry, MAX_META_FILE);
    const checked = checkJarSignatureBlock(block, sf);
    if (!checked.ok) {
      signerFail(checked.reason);
      continue;
    }
    let signatureFile;
    try {
      signatureFile = parseManifest(sf, sfEntry.name);
    } catch (error) {
      if (!(error instanceof SigningError)) throw error;
      signerFail(error.message);
      continue;
    }
    const signed = getAttribute(signatureFile.main, 'X-Android-APK-Signed');
    if (signed !== undefined) {
      for (const id of signed.split(',')) {
        const value = Number.parseInt(id.trim(), 10);
        if (Number.isInteger(value)) apkSchemeIds.add(value);
      }
    }
    // The whole manifest, else its main section plus every individual section.
    const wholeDigests = digestsOf(signatureFile.main, '-Digest-Manifest', minSdk);
    if (wholeDigests.length === 0 || !matches(wholeDigests, manifestBytes)) {
      const mainDigests = digestsOf(signatureFile.main, '-Digest-Manifest-Main-Attributes', minSdk);
      if (mainDigests.length > 0 && !matches(mainDigests, manifest.main.bytes)) {
        signerFail('the .SF digest of the manifest main section does not match');
        continue;
      }
      const sfSections = new Map(signatureFile.sections.map((s) => [s.name, s]));
      let sectionsOk = true;
      for (const [name, section] of sections) {
        const sfSection = sfSections.get(name);
        if (sfSection === undefined) {
          signerFail(`entry ${JSON.stringify(name)} is not signed by this signer (no .SF section)`);
          sectionsOk = false;
          break;
        }
        const digests = digestsOf(sfSection, '-Digest', minSdk);
        if (digests.length === 0) {
          signerFail(`no digest for ${JSON.stringify(name)} in the .SF usable on API level ${minSdk}`);
          sectionsOk = false;
          break;
        }
        if (!matches(digests, section.bytes)) {
          signerFail(`the .SF digest of the manifest section for ${JSON.stringify(name)} does not match`);
          sectionsOk = false;
          break;
        }
      }
      if (!sectionsOk) continue;
    }
    signers.push({ name: signerName, certificate: checked.certificate, certificateDer: checked.certificateDer, digest: checked.digest });
  }
  if (!ok) return { present, ok, signers, apkSchemeIds, entries: [] };

  // Every protected entry is in the manifest with matching digests; every section names an entry.
  const names = new Set(zip.entries.map((entry) => entry.name));
  for (const name of sections.keys()) {
    if (!names.has(name)) findings.error('v1', `META-INF/MANIFEST.MF references ${JSON.stringify(name)}, which is not in the APK`);
  }
  const entries: V1EntryCheck[] = [];
  for (const entry of zip.entries) {
    if (!isDigestedEntry(entry.name)) continue;
    const section = sections.get(entry.name);
    if (section === undefined) {
      findings.error('v1', `entry ${JSON.stringify(entry.name)} is not protected by the JAR signature (missing from META-INF/MANIFEST.MF)`);
      continue;
    }
    const digests = digestsOf(section, '-Digest', minSdk);
    if (digests.length === 0) {
      findings.error('v1', `no digest for ${JSON.stringify(entry.name)} in META-INF/MANIFEST.MF usable on API level ${minSdk}`);
      continue;
    }
    entries.push({ entry, digests });
  }
  return { present, ok: !findings.errors.some((e) => e.scheme === 'v1'), signers, apkSchemeIds, entries };
}

/**
 * The last step of checkV1: compares the entries' content digests (computed by the caller in
 * its single pass over the file, one per listed algorithm) with the manifest's.
 */
export function finishV1(check: V1Check, actual: ReadonlyMap<ZipEntry, readonly Buffer[]>, findings: Findings): V1Check {
  for (const { entry, digests } of check.entries) {
    const computed = actual.get(entry);
    if (computed === undefined || digests.some(({ value }, i) => computed[i]!.toString('base64') !== value.trim())) {
      findings.error('v1', `entry ${JSON.stringify(entry.name)} does not match its digest in META-INF/MANIFEST.MF`);
    }
  }
  return { ...check, ok: check.ok && !findings.errors.some((e) => e.scheme === 'v1') };
}
