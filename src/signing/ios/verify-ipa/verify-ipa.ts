// Whole-app verifier for .ipa files (ios-signing.md §16 point 1), run on every output before it
// is handed out and by `signet verify`: every Mach-O file signed and valid (page hashes, special
// slots, CMS), every bundle's CodeResources matching its files with nothing unsealed, profiles
// covering bundle ids and listing the signer, entitlements granted, nothing expired. Streams
// the archive: only one Mach-O file is in memory at a time.
import type { DataSource } from '../../data-source.ts';
import { SigningError } from '../../errors.ts';
import { droppedBuffers } from '../../reclaim.ts';
import { plistToJs } from '../../plist/index.ts';
import { ZipReader, type ZipEntry } from '../../zip/index.ts';
import { appSummary, CODE_RESOURCES_FILE, describeBrokenBundle, discoverLayout, isProvisioned, openIpa, owningBundle, PROFILE_FILE, type BundleNode, type IpaLayout } from '../bundle/index.ts';
import { checkSeal, parseCodeResources, type BundleFile } from '../code-resources/index.ts';
import { verifyMachO, type HashType, type VerifyMachOOptions } from '../codesign/index.ts';
import { parseProvisioningProfile } from '../profile/index.ts';
import { existingEntitlements, isSignableCode, signerCertificate } from '../resign/existing-signature.ts';
import { readMachO } from '../resign/read-macho.ts';
import { PathIndex } from '../resign/path-index.ts';
import type { WrittenCode } from '../resign/read-back.ts';
import { filesUnder, isInDsym, recordOf, scanEntries, type ScanResult } from '../resign/scan.ts';
import { pageHashesOf, standInOf, streamCode, type StreamedCode } from '../resign/stream-code.ts';
import { profileProblems } from './profile-checks.ts';
import type { BundleVerification, CodeVerification, IpaVerification } from './report.ts';

export interface VerifyIpaOptions {
  /** Clock for expiry checks (default now). */
  now?: Date;
  /** DER roots the code signatures' chains must end in (default: any self-signed root). */
  trustedRoots?: readonly Buffer[];
  /** Mach-O files from this size on are verified streaming, never held whole (default 8 MiB; tests). */
  streamAbove?: number;
}

const MAX_SMALL = 16 * 1024 * 1024;
/** Mach-O files from this size on are verified streaming (resign/stream-code.ts), as the re-signer signs them. */
const STREAM_ABOVE = 8 * 1024 * 1024;
/** Bytes of Mach-O files (each below STREAM_ABOVE) inflated ahead of the one being checked. */
const AHEAD_BYTES = 16 * 1024 * 1024;

export async function verifyIpa(source: DataSource, options: VerifyIpaOptions = {}): Promise<IpaVerification> {
  const zip = await openIpa(source);
  const layout = await discoverLayout(zip, { brokenBundles: 'report' });
  return verifyScanned(zip, layout, await scanEntries(zip, layout.appFiles), [], options);
}

/**
 * The checks after the content pass: `scan` holds the digests of every file of the app and which
 * files are Mach-O code to verify (verify-written.ts passes those of the rewritten files only,
 * with the copied files' digests proved from the input). `problems`: found so far, not tied to
 * one bundle. `readBack`: Mach-O files the re-signer's thread read from these bytes already
 * (resign/read-back.ts), used where the entry is exactly where the thread read it.
 */
export async function verifyScanned(zip: ZipReader, layout: IpaLayout, scan: ScanResult, found: string[], options: VerifyIpaOptions, readBack: ReadonlyMap<string, Promise<WrittenCode | undefined>> = new Map()): Promise<IpaVerification> {
  const now = options.now ?? new Date();
  const records = scan.records;
  const reports = new Map<BundleNode, BundleVerification>();
  for (const bundle of layout.postOrder) {
    reports.set(bundle, { path: bundle.dir, kind: bundle.kind, bundleId: bundle.bundleId, code: [], sealedFiles: 0, sealProblems: [], problems: [] });
  }
  // A code bundle without its executable: the signers refuse it, the report names it.
  const problems: string[] = [...found, ...layout.brokenBundles.map(describeBrokenBundle)];
  const teamIds = new Set<string>();
  let signer: string | undefined;

  // Mach-O files: one at a time, digested for the seal check, verified with their bundle's slots.
  const mains = new Map(layout.postOrder.map((b) => [b.executableEntry.name, b]));
  const codeFiles = layout.appFiles.filter((entry) => scan.machO.has(entry.name));
  // Large files stream past once, never held whole (resign/stream-code.ts); the others are read
  // whole; those read back already are neither, unless the read-back turns out of no use.
  const large = (entry: ZipEntry): boolean => entry.uncompressedSize >= (options.streamAbove ?? STREAM_ABOVE) && !isInDsym(entry.name);
  const streams = (entry: ZipEntry): boolean => large(entry) && !readBack.has(entry.name);
  // The files read whole are inflated ahead (on libuv's pool) while the main thread hashes and
  // checks the current one - including while a large file streams past - up to AHEAD_BYTES of
  // them at a time (each is below STREAM_ABOVE), so memory stays bounded.
  const ahead = new Map<ZipEntry, Promise<Buffer>>();
  let aheadBytes = 0;
  let toFetch = 0;
  const fetchAhead = (): void => {
    for (; toFetch < codeFiles.length; toFetch++) {
      const next = codeFiles[toFetch]!;
      if (streams(next) || readBack.has(next.name)) continue;
      if (aheadBytes > 0 && aheadBytes + next.uncompressedSize > AHEAD_BYTES) return;
      const bytes = readMachO(zip, next);
      // Awaited when its turn comes (its error is reported then); not an unhandled rejection meanwhile.
      bytes.catch(() => {});
      ahead.set(next, bytes);
      aheadBytes += next.uncompressedSize;
    }
  };
  // The large files stream one after another from the start, beside the files read whole: their
  // reads and inflation run on the pool while the main thread checks the others (the app's
  // executable, last in the archive, would otherwise inflate only once all the others are done).
  const sealedFile = (entry: ZipEntry): boolean => entry !== layout.main.executableEntry;
  // A read-back stands for this entry only if the thread read exactly its bytes: the same offset,
  // method, CRC-32 (which the thread checked them against) and sizes; and took its digests if it
  // is sealed. One of no use leaves a large file to stream past here after all.
  const readBackOf = async (entry: ZipEntry): Promise<StreamedCode | undefined> => {
    const taken = await readBack.get(entry.name);
    const same = taken !== undefined && taken.location.dataOffset === entry.dataOffset && taken.location.method === entry.method && taken.location.crc32 === entry.crc32 && taken.location.compressedSize === entry.compressedSize && taken.location.uncompressedSize === entry.uncompressedSize;
    if (same && (taken.code.digests !== undefined || !sealedFile(entry))) return taken.code;
    return large(entry) ? streamCode(zip.source, entry, zip.limits, { wholeFile: sealedFile(entry) }) : undefined;
  };
  // Should the checks below fail, the next stream does not start and the current one is waited
  // for: nothing reads the archive once this function has returned.
  const streamedFiles = new Map<ZipEntry, Promise<StreamedCode | undefined>>();
  let stopped = false;
  let previous: Promise<unknown> = Promise.resolve();
  for (const entry of codeFiles.filter(streams)) {
    const streamed = previous.then(() => (stopped ? undefined : streamCode(zip.source, entry, zip.limits, { wholeFile: sealedFile(entry) })));
    // Awaited when its turn comes (its error is reported then); the next one waits for it either way.
    streamed.catch(() => {});
    previous = streamed.catch(() => undefined);
    streamedFiles.set(entry, streamed);
  }
  let held = 0;
  try {
    for (const entry of codeFiles) {
      // The previous file (up to the size of the executable) is garbage now: free it early.
      droppedBuffers(held);
      // Every file is sealed by the bundle holding it, except the app's own executable (and each
      // bundle's CodeResources): that one needs no digest, and is the largest.
      const sealed = sealedFile(entry);
      const pending = ahead.get(entry);
      if (pending !== undefined) {
        ahead.delete(entry);
        aheadBytes -= entry.uncompressedSize;
      }
      fetchAhead();
      const streamed = (readBack.has(entry.name) ? await readBackOf(entry) : undefined) ?? (await streamedFiles.get(entry));
      let bytes = streamed === undefined ? await (pending ?? readMachO(zip, entry)) : standInOf(streamed);
      held = streamed === undefined ? bytes.length : 0;
      if (sealed && streamed?.digests !== undefined) records.set(entry.name, { kind: 'file', sha1: Buffer.from(streamed.digests.sha1), sha256: Buffer.from(streamed.digests.sha256) });
      // Its digests, for the seals checked below (hashed here: WebCrypto on the pool would copy it twice).
      else if (sealed) records.set(entry.name, recordOf(bytes));
      if (!isSignableCode(bytes) || isInDsym(entry.name)) continue;
      const main = mains.get(entry.name);
      const bundle = main ?? owningBundle(layout, entry.name);
      const report = reports.get(bundle)!;
      let missed = false;
      const taken = streamed === undefined ? undefined : pageHashesOf(streamed);
      const pageHashes = taken === undefined ? undefined : (type: HashType, codeLimit: number, pageSize: number): Buffer | undefined => {
        const hashes = taken(type, codeLimit, pageSize);
        if (hashes === undefined) missed = true;
        return hashes;
      };
      let code = await verifyCode(zip, entry, bytes, main, options, pageHashes);
      if (missed) {
        // The signature asks for page hashes the stream did not take: read the file whole.
        bytes = await readMachO(zip, entry);
        held = bytes.length;
        code = await verifyCode(zip, entry, bytes, main, options);
      }
      report.code.push(code);
      if (code.teamId !== undefined) teamIds.add(code.teamId);
      if (main !== undefined) {
        if (code.identifier !== undefined && code.identifier !== main.bundleId) report.problems.push(`the executable's identifier "${code.identifier}" is not the bundle id "${main.bundleId}"`);
        if (main === layout.main) signer = code.signer;
        if (isProvisioned(main)) await checkProfile(zip, main, bytes, report, now);
      }
    }
  } finally {
    stopped = true;
    await previous; // settles either way (each stream's failure is caught where it is chained)
  }
  // Every file has its digest now: each bundle's seal is checked against the files under it.
  const paths = new PathIndex(records.keys());
  for (const bundle of layout.postOrder) {
    const report = reports.get(bundle)!;
    if (!report.code.some((c) => c.path === bundle.executableEntry.name)) report.problems.push(`the executable ${bundle.executable} is not a Mach-O file`);
    await checkBundleSeal(zip, bundle, filesUnder(records, bundle.dir, paths.under(bundle.dir)), report);
  }
  if (teamIds.size > 1) problems.push(`code is signed by several teams: ${[...teamIds].join(', ')}`);
  const bundles = layout.postOrder.map((b) => reports.get(b)!);
  const verified = problems.length === 0 && bundles.every((b) => b.problems.length === 0 && b.sealProblems.length === 0 && b.code.every((c) => c.problems.length === 0));
  return {
    verified,
    app: appSummary(layout.main.info.dict, layout.main.bundleId),
    ...(teamIds.size === 1 ? { teamId: [...teamIds][0]! } : {}),
    ...(signer === undefined ? {} : { signer }),
    bundles,
    problems,
  };
}

async function verifyCode(zip: ZipReader, entry: ZipEntry, bytes: Buffer, main: BundleNode | undefined, options: VerifyIpaOptions, pageHashes?: VerifyMachOOptions['pageHashes']): Promise<CodeVerification> {
  const slots = main === undefined ? {} : await bundleSlots(zip, main);
  const code: CodeVerification = { path: entry.name, slices: [], problems: [] };
  let report;
  try {
    report = verifyMachO(bytes, { ...slots, ...(options.trustedRoots === undefined ? {} : { trustedRoots: options.trustedRoots }), ...(pageHashes === undefined ? {} : { pageHashes }) });
  } catch (error) {
    if (!(error instanceof SigningError)) throw error;
    code.problems.push(`${error.message} (${error.code})`);
    return code;
  }
  for (const slice of report.slices) {
    code.slices.push({ arch: slice.arch, hashTypes: slice.codeDirectories.map((d) => d.hashType), cdhash: slice.codeDirectories[0]?.cdhash ?? '' });
    code.problems.push(...slice.problems.map((p) => `${slice.arch}: ${p}`));
    if (slice.adhoc === true) code.problems.push(`${slice.arch}: ad-hoc signature (no identity): iOS refuses it outside development`);
    // A main executable must seal its Info.plist (slot 1) and CodeResources (slot 3).
    if (main !== undefined) for (const slot of slice.unchecked) code.problems.push(`${slice.arch}: special slot ${slot} is set but the bundle has no file for it`);
  }
  const first = report.slices[0];
  if (first?.identifier !== undefined) code.identifier = first.identifier;
  if (first?.teamId !== undefined) code.teamId = first.teamId;
  if (first?.cms?.signerSubject !== undefined) code.signer = first.cms.signerSubject;
  // cs_blobs.h: slots 1 (Info.plist) and 3 (CodeResources) bind a bundle to its executable's
  // signature; a CodeDirectory with fewer special slots leaves them unsealed.
  if (main !== undefined && report.slices.some((s) => s.codeDirectories.some((d) => d.nSpecialSlots < 3))) {
    code.problems.push('the main executable does not seal Info.plist and CodeResources (special slots 1 and 3)');
  }
  return code;
}

async function bundleSlots(zip: ZipReader, bundle: BundleNode): Promise<{ infoPlist?: Buffer; codeResources?: Buffer }> {
  const codeResources = zip.getEntry(bundle.dir + CODE_RESOURCES_FILE);
  return {
    infoPlist: bundle.info.bytes,
    ...(codeResources === undefined ? {} : { codeResources: await zip.readEntry(codeResources, MAX_SMALL) }),
  };
}

async function checkProfile(zip: ZipReader, bundle: BundleNode, executable: Buffer, report: BundleVerification, now: Date): Promise<void> {
  const entry = zip.getEntry(bundle.dir + PROFILE_FILE);
  if (entry === undefined) {
    report.problems.push('no embedded.mobileprovision (installd: "A valid provisioning profile for this executable was not found")');
    return;
  }
  let profile;
  try {
    profile = parseProvisioningProfile(await zip.readEntry(entry, MAX_SMALL));
  } catch (error) {
    if (!(error instanceof SigningError)) throw error;
    report.problems.push(`embedded.mobileprovision: ${error.message} (${error.code})`);
    return;
  }
  report.profile = { name: profile.name, uuid: profile.uuid, applicationIdentifier: profile.applicationIdentifier, type: profile.type, expiresAt: profile.expiresAt.toISOString() };
  const entitlements = existingEntitlements(executable);
  if (entitlements !== undefined) report.entitlements = plistToJs(entitlements);
  report.problems.push(...profileProblems(profile, bundle.bundleId, signerCertificate(executable), entitlements, now));
}

async function checkBundleSeal(zip: ZipReader, bundle: BundleNode, files: readonly BundleFile[], report: BundleVerification): Promise<void> {
  const entry = zip.getEntry(bundle.dir + CODE_RESOURCES_FILE);
  if (entry === undefined) {
    report.problems.push('no _CodeSignature/CodeResources: the bundle\'s resources are not sealed');
    return;
  }
  let seal;
  try {
    seal = parseCodeResources(await zip.readEntry(entry, MAX_SMALL));
  } catch (error) {
    if (!(error instanceof SigningError)) throw error;
    report.problems.push(error.message);
    return;
  }
  report.sealedFiles = seal.files2.size > 0 ? seal.files2.size : seal.files.size;
  report.sealProblems = checkSeal(seal, files, { mainExecutable: bundle.executable });
}

/** Throws `ipa_signature_invalid` listing the problems unless the report verified. */
export function assertIpaVerified(report: IpaVerification, problems: string[]): void {
  if (report.verified) return;
  throw new SigningError('ipa_signature_invalid', `The signed .ipa does not verify: ${problems.slice(0, 10).join('; ')}${problems.length > 10 ? ` (and ${problems.length - 10} more)` : ''}`, { details: { problems } });
}

