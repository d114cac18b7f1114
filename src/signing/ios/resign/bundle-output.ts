// The output of each signing job of the re-signer (resign-ipa.ts schedules them): a bundle's loose
// Mach-O files, and a bundle's Info.plist, profile, executable and CodeResources, with the
// entitlements each provisioned executable is signed with (ios-signing.md §13).
import { SigningError } from '../../errors.ts';
import type { PlistDict } from '../../plist/index.ts';
import { METHOD_STORED, type ZipEntry, type ZipWriter } from '../../zip/index.ts';
import { CODE_RESOURCES_FILE, PROFILE_FILE, type BundleNode } from '../bundle/index.ts';
import { buildCodeResources, type BundleFile } from '../code-resources/index.ts';
import { digestSet, type MachOStream } from '../codesign/index.ts';
import { isMachO, parseMachO } from '../macho/parse.ts';
import { deriveEntitlements } from '../profile/index.ts';
import { existingEntitlements, isSignableCode } from './existing-signature.ts';
import { resultChunks, type MachOJob, type MachOJobResult, type SlotDigests } from './macho-job.ts';
import type { ResignedBundle } from './options.ts';
import { compressLargeEntry, entryStyle, writeLargeEntry, writeSmallEntry, type LargeEntry } from './output.ts';
import { readMachO } from './read-macho.ts';
import type { Context, Output } from './resign-context.ts';
import { filesUnder, recordOf, type FileRecord } from './scan.ts';
import { openStream, streamedWrite } from './streamed-output.ts';

export async function signLoose(context: Context, bundle: BundleNode, entry: ZipEntry): Promise<Output> {
  // Loose code keeps its signing identifier: the old signature is read.
  const stream = await openStream(context.zip, entry, context.streamAbove, true);
  let bytes = stream?.standIn ?? (await readMachO(context.zip, entry));
  const report = bundleReport(context, bundle);
  let signable: boolean;
  try {
    signable = isSignableCode(bytes);
  } catch (cause) {
    if (!(cause instanceof SigningError)) throw cause;
    throw new SigningError(cause.code, `${entry.name}: ${cause.message}`, { cause, details: { path: entry.name } });
  }
  if (!signable) {
    // MH_OBJECT, MH_DSYM and the like are resources: sealed, copied unchanged.
    if (stream !== undefined) bytes = await readMachO(context.zip, entry);
    context.records.set(entry.name, recordOf(bytes));
    context.unsigned.add(entry.name);
    return [{ name: entry.name, write: (writer) => writer.addRaw(entry, context.zip, { alignment: 'none' }).then(() => void context.copiedNames.add(entry.name)) }];
  }
  const signing = job(context, entry, bytes, { identifier: undefined, isMainExecutable: false });
  if (stream !== undefined) {
    const target = { report, records: context.records, signingTime: context.signingTime, level: context.options.compressionLevel };
    return [{ name: entry.name, streamed: true, write: streamedWrite(entry, stream, signing, target) }];
  }
  // readMachO checked `bytes` against the entry's CRC-32.
  const result = await context.pool.sign({ ...signing, crc32: entry.crc32 });
  context.records.set(entry.name, { kind: 'file', sha1: Buffer.from(result.sha1), sha256: Buffer.from(result.sha256) });
  const compressed = compressSigned(context, entry, result);
  return [{ name: entry.name, write: (writer) => writeSigned(context, writer, entry, result, compressed, report) }];
}

/**
 * `bytes`: the executable, or the stand-in of a `stream` (header and old signature only; without
 * the old signature when `deferred`: its entitlements are carried over once it has streamed past).
 */
export async function finishBundle(context: Context, bundle: BundleNode, bytes: Buffer, stream: MachOStream | undefined, deferred: boolean): Promise<Output> {
  const { zip, infos, profiles, records } = context;
  const info = infos.get(bundle)!;
  const profile = profiles.get(bundle);
  const report = bundleReport(context, bundle);
  const output: Output = [];
  const style = (name: string) => entryStyle(zip.getEntry(name), context.signingTime);
  if (info.changed) output.push({ name: bundle.info.entry.name, write: (writer) => writeSmallEntry(writer, bundle.info.entry.name, info.bytes, style(bundle.info.entry.name)) });
  if (profile !== undefined) {
    const name = bundle.dir + PROFILE_FILE;
    output.push({ name, write: (writer) => writeSmallEntry(writer, name, profile.bytes, style(name)) });
    report.profile = { uuid: profile.uuid, name: profile.name, applicationIdentifier: profile.applicationIdentifier, expiresAt: profile.expiresAt.toISOString() };
  }

  let slices;
  try {
    const file = parseMachO(bytes);
    slices = file.kind === 'thin' ? [file.slice] : file.slices;
  } catch (cause) {
    const name = bundle.executableEntry.name;
    if (!isMachO(bytes)) throw new SigningError('ipa_invalid', `The executable of ${bundle.relativeDir || 'the app'} (${name}) is not a Mach-O file`, { cause, details: { path: name } });
    throw new SigningError(cause instanceof SigningError ? cause.code : 'macho_invalid', `${name}: ${(cause as Error).message}`, { cause, details: { path: name } });
  }
  // CodeResources hashes follow the bundle's digest set (Apple: files2 `hash` only with SHA-1).
  // The seal waits for the bundle's resources to be hashed. A streamed executable does not wait
  // for it: its code is written and page-hashed meanwhile, and only its signature (special
  // slot 3) needs the seal. So the executable precedes CodeResources in the archive.
  const sha1 = digestSet(slices).some((t) => t.name === 'sha1');
  const codeResourcesName = bundle.dir + CODE_RESOURCES_FILE;
  const seal = (async () => {
    await context.scan.settledUnder(bundle.dir);
    const codeResources = buildCodeResources(bundleFiles(context, bundle), { mainExecutable: bundle.executable, sha1 });
    report.sealedFiles = codeResources.sealed.length;
    const record = recordOf(codeResources.bytes);
    records.set(codeResourcesName, record);
    return { bytes: codeResources.bytes, record };
  })();
  seal.catch(() => {}); // awaited below or by the executable's write

  const entitlementsOf = (executable: Buffer): PlistDict | undefined => {
    if (profile === undefined) return undefined;
    const requested = carriesEntitlements(context, bundle) ? undefined : context.options.entitlements;
    const derived = deriveEntitlements({ profile, bundleId: info.bundleId, ...(requested === undefined ? existingOrNone(executable) : { original: requested }) });
    report.entitlements = derived.entitlements;
    report.droppedEntitlements = derived.dropped;
    return derived.entitlements;
  };
  // Deferred, these are provisional (no old signature yet): they fix the layout but the size of
  // the signature, and are replaced by jobAtEnd below.
  const entitlements = entitlementsOf(bytes);
  const infoRecord = records.get(bundle.info.entry.name) as Extract<FileRecord, { kind: 'file' }>;
  // Slot 3 is filled from the seal before the signature is built (its presence fixes the layout).
  const codeResourcesSlot: SlotDigests = { sha1: new Uint8Array(0), sha256: new Uint8Array(0) };
  const fillSlot = async (): Promise<void> => {
    const { record } = await seal;
    codeResourcesSlot.sha1 = record.sha1;
    codeResourcesSlot.sha256 = record.sha256;
  };
  const signing = job(context, bundle.executableEntry, bytes, {
    identifier: info.bundleId,
    isMainExecutable: true,
    entitlements,
    infoPlist: { sha1: infoRecord.sha1, sha256: infoRecord.sha256 },
    codeResources: codeResourcesSlot,
    // Nested bundles are sealed by their parent; the app's own executable by no one.
    sealed: bundle !== context.layout.main,
  });
  const executableName = bundle.executableEntry.name;
  if (stream !== undefined) {
    const jobAtEnd = (standIn: Buffer): MachOJob => ({ ...signing, entitlements: entitlementsOf(standIn) });
    const target = { report, records, signingTime: context.signingTime, level: context.options.compressionLevel, beforeSignature: fillSlot, ...(deferred ? { jobAtEnd } : {}) };
    output.push({ name: executableName, streamed: true, write: streamedWrite(bundle.executableEntry, stream, signing, target) });
  } else {
    await fillSlot();
    // Not streamed: `bytes` is the whole executable, checked against the entry's CRC-32 (readMachO).
    const result = await context.pool.sign({ ...signing, crc32: bundle.executableEntry.crc32 });
    if (signing.sealed === true) records.set(executableName, { kind: 'file', sha1: Buffer.from(result.sha1), sha256: Buffer.from(result.sha256) });
    const compressed = compressSigned(context, bundle.executableEntry, result);
    output.push({ name: executableName, write: (writer) => writeSigned(context, writer, bundle.executableEntry, result, compressed, report) });
  }
  output.push({ name: codeResourcesName, write: async (writer) => writeSmallEntry(writer, codeResourcesName, (await seal).bytes, style(codeResourcesName)) });
  return output;
}

/**
 * Whether a bundle's executable passes on the entitlements of its old signature (§14): every
 * provisioned bundle, except the app itself when `--entitlements` replaces them. Executables get
 * the bundle id as identifier, so this is all their old signature is read for.
 */
export function carriesEntitlements(context: Context, bundle: BundleNode): boolean {
  return context.profiles.has(bundle) && !(bundle === context.layout.main && context.options.entitlements !== undefined);
}

/**
 * Whether a bundle's executable carries its old entitlements over only once it has streamed
 * past (streamingSigner's layoutAtEnd): when they are carried over and the old signature, at the
 * end of the file, could only be reached by inflating the whole entry an extra time. Not for
 * nested bundles: their parent seals the executable's digests, which need its header first.
 */
export function entitlementsAtEnd(context: Context, bundle: BundleNode): boolean {
  return carriesEntitlements(context, bundle) && bundle === context.layout.main && bundle.executableEntry.method !== METHOD_STORED;
}

function existingOrNone(bytes: Buffer): { original?: PlistDict } {
  const original = existingEntitlements(bytes);
  return original === undefined ? {} : { original };
}

/**
 * Every file of the bundle (nested bundles' files included: iOS seals them as resources), in
 * path order (PathIndex's). All have their digests by now except the two the seal leaves out.
 */
function bundleFiles(context: Context, bundle: BundleNode): BundleFile[] {
  const names = context.sealable.under(bundle.dir).filter((name) => name !== bundle.executableEntry.name && name !== bundle.dir + CODE_RESOURCES_FILE);
  const missing = names.find((name) => !context.records.has(name));
  if (missing !== undefined) throw new Error(`internal: ${missing} has no digest when sealing ${bundle.dir}`);
  return filesUnder(context.records, bundle.dir, names);
}

function job(context: Context, entry: ZipEntry, bytes: Buffer, extra: Pick<MachOJob, 'identifier' | 'isMainExecutable'> & Partial<MachOJob>): MachOJob {
  return {
    bytes,
    name: entry.name,
    entitlements: undefined,
    infoPlist: undefined,
    codeResources: undefined,
    identity: context.options.identity,
    signingTime: context.signingTime,
    ...extra,
  };
}

/** Compression of a signed file starts at once; its write, in output order, awaits it. */
function compressSigned(context: Context, entry: ZipEntry, result: MachOJobResult): Promise<LargeEntry> {
  const compressed = compressLargeEntry(entry.name, resultChunks(result), result.size, result.crc32, entryStyle(entry, context.signingTime), context.options.compressionLevel, result.headLength);
  compressed.catch(() => {}); // reported by the write, which awaits it
  return compressed;
}

async function writeSigned(context: Context, writer: ZipWriter, entry: ZipEntry, result: MachOJobResult, compressed: Promise<LargeEntry>, report: ResignedBundle): Promise<void> {
  // Reported as written, so the order of `code` is the (fixed) output order.
  report.code.push({ path: entry.name, identifier: result.identifier, cdhashes: result.cdhashes });
  await writeLargeEntry(writer, entry.name, await compressed, entryStyle(entry, context.signingTime));
}

function bundleReport(context: Context, bundle: BundleNode): ResignedBundle {
  let report = context.reports.get(bundle);
  if (report === undefined) {
    report = { path: bundle.dir, kind: bundle.kind, bundleId: context.infos.get(bundle)!.bundleId, originalBundleId: bundle.bundleId, droppedEntitlements: [], code: [], sealedFiles: 0 };
    context.reports.set(bundle, report);
  }
  return report;
}
