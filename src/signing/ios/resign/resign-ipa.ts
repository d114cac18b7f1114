// The .ipa re-signer: DataSource in, DataSink out, nothing extracted to disk (ios-signing.md §2).
//
//   1. Model: find Payload/<X>.app and its nested bundles by content (bundle/), plan Info.plist
//      overrides and pick + check a profile for every provisioned bundle — all refusals happen
//      here, before any output.
//   2. Sniff: find the Mach-O files from their first bytes, so the whole work plan is known.
//   3. Then, together: hash every other file as it inflates (leaf bundles' files first); copy
//      the unchanged entries raw (compressed bytes untouched), in input order; and sign
//      leaf-first — per bundle its loose Mach-O files, then, once its nested bundles are done,
//      its Info.plist, embedded.mobileprovision, main executable and CodeResources. Each Mach-O
//      file is signed once; outputs are written after the copies, in a fixed order
//      (OrderedGate), so the archive is deterministic and memory bounded.
//   4. Large Mach-O files (STREAM_ABOVE) are never held whole: they are signed while written
//      (streamed-output.ts), and a bundle's streamed executable is written while its resources
//      are still being hashed — only its signature, at the end, waits for the CodeResources seal.
//
// Per-bundle results (a nested bundle's signed files and CodeResources) depend only on that
// bundle's inputs, the identity, its profile and the signing time, which is the unit a
// per-device re-signing cache would key on (SPECIFICATION.md §15).
import { SigningError } from '../../errors.ts';
import type { DataSink } from '../../data-sink.ts';
import type { DataSource } from '../../data-source.ts';
import type { PlistDict } from '../../plist/index.ts';
import { METHOD_STORED, ZipReader, ZipWriter, type ZipEntry } from '../../zip/index.ts';
import { appSummary, CODE_RESOURCES_FILE, discoverLayout, openIpa, owningBundle, PROFILE_FILE, type BundleNode, type IpaLayout } from '../bundle/index.ts';
import { buildCodeResources, type BundleFile } from '../code-resources/index.ts';
import { digestSet, type MachOStream } from '../codesign/index.ts';
import { isMachO, parseMachO } from '../macho/parse.ts';
import { deriveEntitlements, type ProvisioningProfile } from '../profile/index.ts';
import { existingEntitlements, isSignableCode } from './existing-signature.ts';
import { resultChunks, type MachOJob, type MachOJobResult, type SlotDigests } from './macho-job.ts';
import { inProcessPool, workerPool, type MachOSignerPool } from './macho-pool.ts';
import type { ResignedBundle, ResignOptions, ResignResult } from './options.ts';
import { OrderedGate } from './ordered-gate.ts';
import { PathIndex } from './path-index.ts';
import type { CopiedEntry, ResignProof } from './proof.ts';
import { entryStyle, writeLargeEntry, writeSmallEntry } from './output.ts';
import { planInfoPlists, type InfoPlan } from './overrides.ts';
import { assignProfiles, checkRequestedEntitlements } from './profiles.ts';
import { ReadAheadSource } from './read-ahead.ts';
import { readMachO } from './read-macho.ts';
import { filesUnder, recordOf, sniffMachO, startScan, type BackgroundScan, type FileRecord } from './scan.ts';
import { openStream, streamedWrite } from './streamed-output.ts';

const POOL_THRESHOLD = 256 * 1024 * 1024;
/**
 * Mach-O files from this size on are signed in one streaming pass as they are written
 * (codesign/sign-stream.ts) instead of being held whole: an 80 MiB executable then costs a few
 * MiB of memory, not 80. Smaller files are signed in memory, where they can overlap the copy.
 */
const STREAM_ABOVE = 8 * 1024 * 1024;
/** Read-ahead of the raw copy: large enough to batch small entries, small enough not to linger (bench/ipa.ts). */
const COPY_WINDOW = 1024 * 1024;

/**
 * A unit of output: entries to write, in order, once the job's turn comes. A `streamed` entry is
 * signed while it is written, so its digests exist only once it has been written.
 */
type Output = Array<{ name: string; streamed?: boolean; write: (writer: ZipWriter) => Promise<void> }>;

interface Context {
  zip: ZipReader;
  layout: IpaLayout;
  infos: Map<BundleNode, InfoPlan>;
  profiles: Map<BundleNode, ProvisioningProfile>;
  records: Map<string, FileRecord>;
  /** Every name that gets a record: the app's files and each bundle's CodeResources and profile. */
  sealable: PathIndex;
  scan: BackgroundScan;
  options: ResignOptions;
  /** Aborted by the caller or when any part of the pipeline fails. */
  signal: AbortSignal;
  signingTime: Date;
  pool: MachOSignerPool;
  reports: Map<BundleNode, ResignedBundle>;
  /** Size from which Mach-O files are signed streaming; Infinity when the sink cannot patch headers. */
  streamAbove: number;
  /** Names of the entries copied raw from the input, for the proof. */
  copiedNames: Set<string>;
  /** Mach-O files found not signable, copied as resources. */
  unsigned: Set<string>;
}

export async function resignIpa(source: DataSource, sink: DataSink, options: ResignOptions): Promise<ResignResult> {
  return (await resignIpaProved(source, sink, options)).result;
}

/**
 * resignIpa, also returning the proof that verifyWritten (../verify-ipa/verify-written.ts) checks
 * the output against instead of re-reading and re-hashing every copied entry.
 */
export async function resignIpaProved(source: DataSource, sink: DataSink, options: ResignOptions): Promise<{ result: ResignResult; proof: ResignProof }> {
  const now = options.now ?? new Date();
  const signingTime = options.signingTime ?? now;
  const zip = await openIpa(source);
  const layout = await discoverLayout(zip);
  const infos = planInfoPlists(layout, options.overrides);
  const profiles = assignProfiles(layout, infos, options, now);
  if (options.entitlements !== undefined) checkRequestedEntitlements(layout, infos, profiles, options.entitlements);
  options.signal?.throwIfAborted();

  // Entries the signer rewrites (or adds); everything else in the app is copied unchanged.
  const rewritten = new Set<string>();
  const records = new Map<string, FileRecord>();
  for (const bundle of layout.postOrder) {
    const info = infos.get(bundle)!;
    if (info.changed) rewritten.add(bundle.info.entry.name);
    records.set(bundle.info.entry.name, recordOf(info.bytes));
    rewritten.add(bundle.dir + CODE_RESOURCES_FILE);
    rewritten.add(bundle.executableEntry.name);
    const profile = profiles.get(bundle);
    if (profile !== undefined) {
      rewritten.add(bundle.dir + PROFILE_FILE);
      records.set(bundle.dir + PROFILE_FILE, recordOf(profile.bytes));
    }
  }
  // Code is found by its first bytes; then hashing the resources, copying the unchanged entries
  // and signing the code all proceed together (a bundle waits only for the files it seals).
  const unchanged = layout.appFiles.filter((e) => !rewritten.has(e.name));
  const machO = await sniffMachO(zip, unchanged);
  for (const name of machO) rewritten.add(name);
  // On any failure the background work stops too, and is waited for: nothing reads the source
  // after this function returns.
  const stop = new AbortController();
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
  // Leaf bundles' files first (post-order), so nested bundles can be sealed and signed while the
  // app's own resources are still being hashed.
  const rank = new Map(layout.postOrder.map((b, i) => [b, i]));
  const toHash = unchanged
    .filter((e) => !machO.has(e.name))
    .map((entry) => ({ entry, rank: rank.get(owningBundle(layout, entry.name))! }))
    .sort((a, b) => a.rank - b.rank || a.entry.dataOffset - b.entry.dataOffset)
    .map((x) => x.entry);
  const scan = startScan(zip, toHash, records, signal);

  const writer = new ZipWriter(sink, { alignment: { storedAlignment: 1 } });
  const dropped = new Set(layout.dropped.map((e) => e.name));
  let copied = 0;
  // Entries written as raw copies of the input's (the proof), and Mach-O files found unsignable.
  const copiedNames = new Set<string>();
  const unsigned = new Set<string>();
  const copy = (async () => {
    const from = new ReadAheadSource(zip.source, COPY_WINDOW);
    for (const entry of zip.entriesInFileOrder()) {
      if (dropped.has(entry.name) || rewritten.has(entry.name)) continue;
      signal.throwIfAborted();
      await writer.addRaw(entry, from, { alignment: 'none' });
      copiedNames.add(entry.name);
      copied++;
    }
  })();
  copy.catch(() => {}); // awaited by signBundles before its first write

  // A worker loads the signing engine and costs ~25-40 MB, while page hashing runs at ~1.3 GB/s:
  // on bench/ipa.ts two workers were slower than signing in-process, even with the compile
  // cache the workers now share (bin/signet): 0.87 s against 0.69-0.75 s for 70 MiB of code,
  // and no faster for 140 MiB, with 50-80 MB more memory. So the pool is used only for apps with
  // a lot of code; inflating, hashing and writing use both cores either way (libuv's pool
  // inflates and writes while the main thread hashes).
  const codeBytes = [...machO, ...layout.postOrder.map((b) => b.executableEntry.name)].reduce((n, name) => n + (zip.getEntry(name)?.uncompressedSize ?? 0), 0);
  const threads = options.workers ?? (codeBytes >= POOL_THRESHOLD ? 2 : 0);
  const pool = threads > 0 ? workerPool(threads) : inProcessPool();
  // A streamed entry's CRC and sizes are known only at its end: the writer patches its local
  // header in place (DataSink.writeAt). A sink that cannot would need a data descriptor, which
  // some iOS installers do not accept for stored entries, so such sinks get the in-memory path.
  const streamAbove = sink.writeAt === undefined ? Infinity : options.streamAbove ?? STREAM_ABOVE;
  const sealable = new PathIndex(
    new Set([
      ...layout.appFiles.map((entry) => entry.name),
      ...layout.postOrder.flatMap((bundle) => [bundle.dir + CODE_RESOURCES_FILE, ...(profiles.has(bundle) ? [bundle.dir + PROFILE_FILE] : [])]),
    ]),
  );
  const context: Context = { zip, layout, infos, profiles, records, sealable, scan, options, signal, signingTime, pool, reports: new Map(), streamAbove, copiedNames, unsigned };
  let counts: { rewritten: number; added: number };
  try {
    counts = await signBundles(context, writer, [...machO], copy);
    await scan.done;
  } catch (error) {
    stop.abort(error);
    throw error;
  } finally {
    await Promise.allSettled([scan.done, copy]);
    await pool.close();
  }
  const result = await writer.finish();
  const mainInfo = infos.get(layout.main)!;
  const proofCopied = new Map<string, CopiedEntry>();
  const written = new Set<string>();
  for (const { name } of writer.entries) {
    if (!copiedNames.has(name)) {
      written.add(name);
      continue;
    }
    const entry = zip.getEntry(name)!;
    proofCopied.set(name, {
      inputDataOffset: entry.dataOffset, compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize,
      crc32: entry.crc32, method: entry.method, record: records.get(name), unsignedMachO: unsigned.has(name),
    });
  }
  return {
    result: {
      app: appSummary(mainInfo.dict, mainInfo.bundleId),
      bundles: layout.postOrder.map((b) => context.reports.get(b)!),
      entries: { copied, rewritten: counts.rewritten, added: counts.added, dropped: dropped.size },
      size: result.size,
    },
    proof: { inputSize: source.size, copied: proofCopied, written },
  };
}

/** Schedules every signing job leaf-first and writes their outputs in that fixed order. */
async function signBundles(context: Context, writer: ZipWriter, machO: string[], copy: Promise<void>): Promise<{ rewritten: number; added: number }> {
  const { layout, zip } = context;
  const gate = new OrderedGate(Math.max(2, context.pool.concurrency));
  const jobs: Array<Promise<Output>> = [];
  // Resolved once a job's output is written; a streamed file's digests exist only then.
  const written: Array<PromiseWithResolvers<void>> = [];
  const sealed = (ticket: number, job: Promise<Output>): Promise<unknown> => {
    const done = job.then((output) => (output.some((o) => o.streamed === true) ? written[ticket]!.promise : undefined));
    done.catch(() => {}); // the job's own failure is reported through `jobs`
    return done;
  };
  const bundleDone = new Map<BundleNode, Promise<unknown>>();
  const loose = new Map<BundleNode, ZipEntry[]>();
  const code = new Set(machO);
  for (const entry of zip.entriesInFileOrder()) {
    if (!code.has(entry.name)) continue;
    const owner = owningBundle(layout, entry.name);
    loose.set(owner, [...(loose.get(owner) ?? []), entry]);
  }
  const counts = { rewritten: 0, added: 0 };
  const openings: Array<Promise<MachOStream | undefined>> = [];
  for (const bundle of layout.postOrder) {
    const mine: Array<Promise<unknown>> = [];
    for (const entry of loose.get(bundle) ?? []) {
      const ticket = jobs.length;
      const job = (async () => {
        await gate.acquire(ticket);
        context.signal.throwIfAborted();
        return signLoose(context, bundle, entry);
      })();
      jobs.push(job);
      written.push(Promise.withResolvers());
      mine.push(sealed(ticket, job));
    }
    const ticket = jobs.length;
    const dependencies = [...mine, ...bundle.children.map((c) => bundleDone.get(c)!)];
    // Opened now, beside the other jobs, not once this job's turn comes: opening a large deflated
    // executable whose old signature is read ahead (a nested bundle's; the app's own waits for it
    // to stream past, entitlementsAtEnd) inflates it whole to reach that signature, at its end
    // (stream-entry.ts), which then overlaps the jobs before it. An open stream holds only the
    // file's header and old signature.
    const deferred = entitlementsAtEnd(context, bundle);
    const opening = openStream(context.zip, bundle.executableEntry, context.streamAbove, carriesEntitlements(context, bundle) && !deferred);
    opening.catch(() => {}); // awaited by the job, or at a failure below
    openings.push(opening);
    const job = (async () => {
      await Promise.all(dependencies);
      await gate.acquire(ticket);
      context.signal.throwIfAborted();
      // The executable is read (or, streamed, starts to be written) while the bundle's
      // resources may still be hashing; finishBundle waits for them only to seal.
      const stream = await opening;
      const executable = stream?.standIn ?? (await readMachO(context.zip, bundle.executableEntry));
      return finishBundle(context, bundle, executable, stream, deferred);
    })();
    jobs.push(job);
    written.push(Promise.withResolvers());
    bundleDone.set(bundle, sealed(ticket, job));
  }
  // A failed job stops the writer below; the others must not surface as unhandled rejections.
  for (const job of jobs) job.catch(() => {});
  try {
    // Unchanged entries are written first; the jobs meanwhile read, sign and hash the code.
    await copy;
    for (const [ticket, job] of jobs.entries()) {
      const output = await job;
      context.signal.throwIfAborted();
      for (const { name, write } of output) {
        await write(writer);
        if (zip.getEntry(name) === undefined) counts.added++;
        else counts.rewritten++;
      }
      // Written: let the signed bytes go now (the settled promise would otherwise keep them).
      output.length = 0;
      written[ticket]!.resolve();
      gate.release();
    }
  } catch (error) {
    // Jobs waiting for a file that will not be written now fail instead of waiting forever.
    for (const w of written) {
      w.promise.catch(() => {});
      w.reject(error);
    }
    // Nothing reads the source once the re-sign has returned.
    await Promise.allSettled(openings);
    throw error;
  }
  return counts;
}

async function signLoose(context: Context, bundle: BundleNode, entry: ZipEntry): Promise<Output> {
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
  const result = await context.pool.sign(signing);
  context.records.set(entry.name, { kind: 'file', sha1: Buffer.from(result.sha1), sha256: Buffer.from(result.sha256) });
  return [{ name: entry.name, write: (writer) => writeSigned(context, writer, entry, result, report) }];
}

/**
 * `bytes`: the executable, or the stand-in of a `stream` (header and old signature only; without
 * the old signature when `deferred`: its entitlements are carried over once it has streamed past).
 */
async function finishBundle(context: Context, bundle: BundleNode, bytes: Buffer, stream: MachOStream | undefined, deferred: boolean): Promise<Output> {
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
    const record = recordOf(codeResources.bytes) as Extract<FileRecord, { kind: 'file' }>;
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
    const result = await context.pool.sign(signing);
    if (signing.sealed === true) records.set(executableName, { kind: 'file', sha1: Buffer.from(result.sha1), sha256: Buffer.from(result.sha256) });
    output.push({ name: executableName, write: (writer) => writeSigned(context, writer, bundle.executableEntry, result, report) });
  }
  output.push({ name: codeResourcesName, write: async (writer) => writeSmallEntry(writer, codeResourcesName, (await seal).bytes, style(codeResourcesName)) });
  return output;
}

/**
 * Whether a bundle's executable passes on the entitlements of its old signature (§14): every
 * provisioned bundle, except the app itself when `--entitlements` replaces them. Executables get
 * the bundle id as identifier, so this is all their old signature is read for.
 */
function carriesEntitlements(context: Context, bundle: BundleNode): boolean {
  return context.profiles.has(bundle) && !(bundle === context.layout.main && context.options.entitlements !== undefined);
}

/**
 * Whether a bundle's executable carries its old entitlements over only once it has streamed
 * past (streamingSigner's layoutAtEnd): when they are carried over and the old signature, at the
 * end of the file, could only be reached by inflating the whole entry an extra time. Not for
 * nested bundles: their parent seals the executable's digests, which need its header first.
 */
function entitlementsAtEnd(context: Context, bundle: BundleNode): boolean {
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

async function writeSigned(context: Context, writer: ZipWriter, entry: ZipEntry, result: MachOJobResult, report: ResignedBundle): Promise<void> {
  // Reported as written, so the order of `code` is the (fixed) output order.
  report.code.push({ path: entry.name, identifier: result.identifier, cdhashes: result.cdhashes });
  const style = entryStyle(entry, context.signingTime);
  await writeLargeEntry(writer, entry.name, resultChunks(result), result.size, result.crc32, style, context.options.compressionLevel, result.headLength);
}

function bundleReport(context: Context, bundle: BundleNode): ResignedBundle {
  let report = context.reports.get(bundle);
  if (report === undefined) {
    report = { path: bundle.dir, kind: bundle.kind, bundleId: context.infos.get(bundle)!.bundleId, originalBundleId: bundle.bundleId, droppedEntitlements: [], code: [], sealedFiles: 0 };
    context.reports.set(bundle, report);
  }
  return report;
}
