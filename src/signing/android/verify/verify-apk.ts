// Verifying an APK the way apksig ApkVerifier does for a platform range [minSdk, maxSdk]:
//   API 33+ use v3.1 when present; API 28+ use v3 when present; API 24+ use v2 when present;
//   everything else (and API < 24 always) needs v1. Stripping protections are enforced: v1's
//   X-Android-APK-Signed, v2's 0xbeeff00d attribute, v3's rotation-min-sdk attribute.
// The v1 entry digests and the content digests of all schemes are computed in one pass over the file.
import type { DataSource } from '../../data-source.ts';
import { type ContentDigestAlgorithm } from '../algorithms.ts';
import { isUnprotectedEntry, openApk, readManifestFacts, type ManifestFacts } from '../apk/open.ts';
import { MAX_SDK, MAX_SIGNERS, SCHEME_ID_V2, SCHEME_ID_V3, V2_BLOCK_ID, V31_BLOCK_ID, V3_BLOCK_ID } from '../block/constants.ts';
import { findPair } from '../block/parse.ts';
import { isChunkedAlgorithm, type ChunkedAlgorithm, type ContentPrefix } from '../content-digest.ts';
import { MANIFEST_ENTRY_NAME } from '../v1/entries.ts';
import { certificateSha256, describeSigner, tryParseCertificate } from './certificates.ts';
import { Findings, type ApkVerification, type SchemeName, type SignerReport } from './report.ts';
import { checkSchemeBlock, type SchemeCheck } from './scheme-verify.ts';
import { digestApkContents, type WrittenEntryDigest } from './content-pass.ts';
import { checkV1, finishV1, type V1Check } from './v1-verify.ts';

// android.os.Build.VERSION_CODES
const N = 24;
const O_MR1 = 27;
const P = 28;
const R = 30;
const T = 33;

export interface VerifyApkOptions {
  /** Lowest platform to check; default: the manifest's minSdkVersion (apksigner --min-sdk-version). */
  readonly minSdk?: number;
  /** Highest platform to check; default: any. */
  readonly maxSdk?: number;
  /** Clock for the "certificate expired" warning. */
  readonly now?: Date;
  /**
   * The signer's digests of the entries it wrote (SignApkResult.written), when the signer checks
   * its own output: used only where the recomputed v2/v3 content digest proves the bytes (content-pass.ts).
   */
  readonly written?: ReadonlyMap<string, WrittenEntryDigest>;
  /**
   * With `written`: the chunk digests of the start of the file that the signer read back from it
   * while it finished the APK (SignApkResult.readBack); the verifier reads only the bytes after it.
   */
  readonly readBack?: ContentPrefix;
}

/**
 * Throws SigningError for an input that is not a readable APK (zip errors, missing manifest);
 * otherwise reports, and `verified` says whether Android would accept the signatures.
 */
export async function verifyApk(source: DataSource, options: VerifyApkOptions = {}): Promise<ApkVerification> {
  // Every protected entry gets every zip check; the others are read, if at all, as JAR signature
  // files by their central directory record, as apksig's verifier reads them (apk/open.ts).
  const apk = await openApk(source, { discarded: isUnprotectedEntry });
  const findings = new Findings();
  const now = options.now ?? new Date();
  let facts: ManifestFacts | null = null;
  if (options.minSdk === undefined) facts = await readManifestFacts(apk);
  else facts = await readManifestFacts(apk).catch(() => null);
  const minSdk = options.minSdk ?? facts!.minSdk;
  const maxSdk = options.maxSdk ?? MAX_SDK;
  const status = (present: boolean, verified: boolean) => ({ present, verified });

  let block = apk.signingBlock.found ? apk.signingBlock.block : null;
  if (block !== null && !apk.centralDirectoryFollowedByEocd) {
    // apksig findSignature: "ZIP Central Directory is not immediately followed by End of Central Directory".
    findings.warn(null, 'the central directory is not immediately followed by the end of central directory: APK signatures ignored');
    block = null;
  }
  if (block !== null && block.malformed !== null) findings.warn(null, block.malformed);
  const v2Value = block === null ? null : findPair(block, V2_BLOCK_ID);
  const v3Value = block === null ? null : findPair(block, V3_BLOCK_ID);
  const v31Value = block === null ? null : findPair(block, V31_BLOCK_ID);

  let v31: SchemeCheck | null = null;
  if (v31Value !== null && maxSdk >= T) v31 = checkSchemeBlock('v3.1', v31Value, { minSdk: Math.max(minSdk, T), maxSdk }, findings);

  let v3: SchemeCheck | null = null;
  if (v3Value !== null && maxSdk >= P) {
    // Devices that use v3.1 do not look at v3: v3 covers the levels below the v3.1 signers.
    const v31Min = v31 === null || v31.signers.length === 0 ? null : Math.min(...v31.signers.map((s) => s.minSdk ?? T));
    const v3Max = v31Min === null ? maxSdk : Math.min(maxSdk, v31Min - 1);
    const v3Min = Math.max(minSdk, P);
    if (v3Min <= v3Max) {
      v3 = checkSchemeBlock('v3', v3Value, { minSdk: v3Min, maxSdk: v3Max }, findings);
      checkCoverage(v3, v3Min, v3Max, findings);
    }
    // V3SchemeVerifier (apksig 33+): a v3 signer announcing rotation at some SDK needs the v3.1 block.
    if (v3 !== null && v3.rotationMinSdk !== null && v31Value === null && maxSdk >= v3.rotationMinSdk) {
      findings.error('v3', `the v3 signer declares key rotation from SDK ${v3.rotationMinSdk}, but the v3.1 block is missing (stripped)`);
    }
  }
  if (v31 !== null) checkCoverage(v31, Math.max(minSdk, Math.min(...v31.signers.map((s) => s.minSdk ?? T), T)), maxSdk, findings);

  let v2: SchemeCheck | null = null;
  const v2Max = v3Value !== null ? O_MR1 : maxSdk;
  const v2Min = Math.max(minSdk, N);
  if (v2Value !== null && maxSdk >= N && v2Min <= v2Max) {
    v2 = checkSchemeBlock('v2', v2Value, { minSdk: v2Min, maxSdk: v2Max }, findings);
    if (v2.signers.length > MAX_SIGNERS) findings.error('v2', `${v2.signers.length} signers, more than the ${MAX_SIGNERS} allowed`);
  }
  // V2SchemeVerifier: the 0xbeeff00d attribute says which newer schemes were applied too.
  if (v2 !== null && v2.requiredSchemes.has(SCHEME_ID_V3) && v3Value === null && maxSdk >= P) {
    findings.error('v2', 'APK Signature Scheme v3 signature referenced by the v2 signer but not found (stripped)');
  }

  // ApkVerifier: JAR signatures are checked below API 24, or when no v2+ signature exists at all
  // (platforms from 24 on ignore v1 once a v2+ block is present).
  let v1: V1Check | null = null;
  const anyApkSignature = v2Value !== null || v3Value !== null || v31Value !== null;
  if (minSdk < N || !anyApkSignature) v1 = await checkV1(apk, minSdk, findings);

  // One pass over the file for the v1 entry digests and the content digests of every algorithm
  // a verified v2/v3/v3.1 signature vouches for (once per algorithm, not per scheme).
  const checks = [v2, v3, v31].filter((c): c is SchemeCheck => c !== null);
  const digestContent = block !== null && checks.some((c) => c.signers.length > 0);
  const v1Entries = new Map((v1?.entries ?? []).map(({ entry, digests }) => [entry, digests.map((d) => d.hash)]));
  const pass = await digestApkContents(apk, {
    entries: v1Entries,
    chunked: digestContent ? chunkedAlgorithmsOf(checks) : [],
    blockOffset: block?.offset ?? null,
    ...(options.written === undefined ? {} : { written: options.written }),
    ...(options.written === undefined || options.readBack === undefined ? {} : { prefix: options.readBack }),
  });
  const contentProven = digestContent && compareContentDigests(checks, pass.chunked, findings) && checks.some((c) => c.ok && c.signers.length > 0);
  if (pass.provisional.size > 0 && !contentProven) {
    // The signer's digests are not proven to describe these bytes: take them from the file.
    const again = await digestApkContents(apk, { entries: new Map([...pass.provisional].map((entry) => [entry, v1Entries.get(entry)!])), chunked: [], blockOffset: null });
    for (const [entry, digests] of again.entries) pass.entries.set(entry, digests);
  }
  if (v1 !== null) {
    v1 = finishV1(v1, pass.entries, findings);
    // V1SchemeVerifier: X-Android-APK-Signed stripping protection.
    if (v1.ok && v1.apkSchemeIds.has(SCHEME_ID_V2) && v2Value === null && maxSdk >= N) {
      findings.error('v1', 'META-INF/*.SF indicates the APK is signed using APK Signature Scheme v2, but no such signature was found (stripped)');
    }
    if (v1.ok && v1.apkSchemeIds.has(SCHEME_ID_V3) && v3Value === null && maxSdk >= P) {
      findings.error('v1', 'META-INF/*.SF indicates the APK is signed using APK Signature Scheme v3, but no such signature was found (stripped)');
    }
  }

  // ApkVerifier: schemes that both verified must name the same signer (v3 may have rotated from it).
  if (v1?.ok && v2?.ok && v2.signers.length > 0) {
    const v1Certs = new Set(v1.signers.map((s) => s.certificateDer.toString('hex')));
    const v2Certs = new Set(v2.signers.map((s) => s.certificateDer.toString('hex')));
    if (v1Certs.size !== v2Certs.size || [...v1Certs].some((c) => !v2Certs.has(c))) findings.error(null, 'v1 and v2 signers do not match');
  }
  if (v2?.ok && v3?.ok && v2.signers.length > 0 && v3.signers.length > 0) {
    const known = new Set(v3.signers.flatMap((s) => [s.certificateDer, ...(s.lineage ?? []).map((n) => n.certificate)]).map((c) => c.toString('hex')));
    if (!v2.signers.every((s) => known.has(s.certificateDer.toString('hex')))) findings.error(null, 'the v3 signer neither is nor rotated from the v2 signer');
  }

  const passed = (check: SchemeCheck | null): boolean => check !== null && check.ok && check.signers.length > 0 && !findings.errors.some((e) => e.scheme === check.scheme);
  const v1Verified = v1 !== null && v1.ok && !findings.errors.some((e) => e.scheme === 'v1');
  const schemes: Record<SchemeName, { present: boolean; verified: boolean }> = {
    v1: status(v1?.present ?? apk.zip.getEntry(MANIFEST_ENTRY_NAME) !== undefined, v1Verified),
    v2: status(v2Value !== null, passed(v2)),
    v3: status(v3Value !== null, passed(v3)),
    'v3.1': status(v31Value !== null, passed(v31)),
  };
  if (!Object.values(schemes).some((s) => s.verified) && findings.errors.length === 0) findings.error(null, 'No APK signature found for the checked SDK range');
  // ApkVerifier: targetSdkVersion 30+ needs an APK Signature Scheme v2+ signature.
  if (facts?.targetSdk != null && facts.targetSdk >= R && !schemes.v2.verified && !schemes.v3.verified && !schemes['v3.1'].verified) {
    findings.error(null, `targetSdkVersion ${facts.targetSdk} requires an APK Signature Scheme v2 or newer signature`);
  }

  const signers: SignerReport[] = [];
  for (const signer of v1?.signers ?? []) signers.push(describeSigner('v1', signer.name, signer.certificate, [signer.digest.toUpperCase()], now));
  for (const check of checks) {
    for (const signer of check.signers) {
      const lineage = signer.lineage?.map((node) => {
        const parsed = tryParseCertificate(node.certificate);
        return parsed === null ? 'unparseable' : certificateSha256(parsed);
      });
      signers.push(describeSigner(check.scheme, String(signer.index), signer.certificate, signer.algorithms.map((a) => a.name), now, {
        ...(signer.minSdk === null ? {} : { minSdk: signer.minSdk }),
        ...(signer.maxSdk === null ? {} : { maxSdk: signer.maxSdk }),
        ...(lineage === undefined ? {} : { lineage }),
      }));
    }
  }
  for (const signer of signers) {
    if (signer.expired) findings.warn(signer.scheme, `signer ${signer.name}: certificate expired on ${signer.notAfter} (Android does not check validity)`);
  }
  return {
    verified: findings.errors.length === 0 && Object.values(schemes).some((s) => s.verified),
    minSdk,
    maxSdk,
    schemes,
    signers,
    errors: findings.errors,
    warnings: findings.warnings,
  };
}

/** V3SchemeVerifier: signers sorted by minSdk must cover [from, to] without gaps or overlaps. */
function checkCoverage(check: SchemeCheck, from: number, to: number, findings: Findings): void {
  if (!check.ok || check.signers.length === 0) return;
  const ranges = check.signers.map((s) => [s.minSdk ?? 0, s.maxSdk ?? MAX_SDK] as const).sort((a, b) => a[0] - b[0]);
  let next = from;
  for (const [low, high] of ranges) {
    if (low > next) break;
    next = Math.max(next, high + 1);
  }
  if (next <= to) findings.error(check.scheme, `${check.scheme} signers do not cover SDK versions ${next}..${to}`);
}

function chunkedAlgorithmsOf(checks: readonly SchemeCheck[]): ChunkedAlgorithm[] {
  const wanted = new Set<ContentDigestAlgorithm>();
  for (const check of checks) for (const signer of check.signers) for (const algorithm of signer.contentDigests.keys()) wanted.add(algorithm);
  return [...wanted].filter(isChunkedAlgorithm);
}

/** Records a mismatch (or an unchecked fs-verity digest) per signer; true when every checked digest matched. */
function compareContentDigests(checks: readonly SchemeCheck[], actual: ReadonlyMap<ChunkedAlgorithm, Buffer>, findings: Findings): boolean {
  let matched = true;
  for (const check of checks) {
    for (const signer of check.signers) {
      for (const [algorithm, expected] of signer.contentDigests) {
        if (!isChunkedAlgorithm(algorithm)) {
          findings.warn(check.scheme, `signer #${signer.index}: ${algorithm} content digest not checked (fs-verity digests are not computed)`);
          continue;
        }
        if (!actual.get(algorithm)!.equals(expected)) {
          matched = false;
          findings.error(check.scheme, `signer #${signer.index}: ${algorithm} content digest mismatch: the APK was modified after signing`);
        }
      }
    }
  }
  return matched;
}
