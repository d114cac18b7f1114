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
// This file schedules the jobs and writes their outputs; bundle-output.ts builds each job's
// output (a bundle's loose code; its Info.plist, profile, executable and seal), and
// resign-context.ts is what the jobs share.
//
// Per-bundle results (a nested bundle's signed files and CodeResources) depend only on that
// bundle's inputs, the identity, its profile and the signing time, which is the unit a
// per-device re-signing cache would key on (SPECIFICATION.md §15).
import type { DataSink } from '../../data-sink.ts';
import { FileSource, type DataSource } from '../../data-source.ts';
import { ZipWriter, type ZipEntry } from '../../zip/index.ts';
import { appSummary, CODE_RESOURCES_FILE, discoverLayout, openIpa, owningBundle, PROFILE_FILE, type BundleNode } from '../bundle/index.ts';
import { carriesEntitlements, entitlementsAtEnd, finishBundle, signLoose } from './bundle-output.ts';
import { inProcessPool, workerPool } from './macho-pool.ts';
import type { ResignOptions, ResignResult } from './options.ts';
import { OrderedGate } from './ordered-gate.ts';
import { PathIndex } from './path-index.ts';
import type { CopiedEntry, ResignProof } from './proof.ts';
import { WrittenCodeReadBack } from './read-back.ts';
import { planInfoPlists } from './overrides.ts';
import { assignProfiles, checkRequestedEntitlements } from './profiles.ts';
import { ReadAheadSource } from './read-ahead.ts';
import { readMachO } from './read-macho.ts';
import type { Context, Output } from './resign-context.ts';
import { recordOf, sniffMachO, startScan, type FileRecord } from './scan.ts';
import { startScanThread } from './scan-thread.ts';
import { openStream } from './streamed-output.ts';

const POOL_THRESHOLD = 256 * 1024 * 1024;
/**
 * Mach-O files from this size on are signed in one streaming pass as they are written
 * (codesign/sign-stream.ts) instead of being held whole: an 80 MiB executable then costs a few
 * MiB of memory, not 80. Smaller files are signed in memory, where they can overlap the copy.
 */
const STREAM_ABOVE = 8 * 1024 * 1024;
const JOBS_IN_FLIGHT = 4;
/**
 * Resources from this many bytes on are hashed on a thread of their own (scan-thread.ts): on
 * bench:ipa (61 MB of them) `signet sign` took 0.1-0.2 s less; a thread costs ~30 ms to start.
 */
const SCAN_THREAD_ABOVE = 16 * 1024 * 1024;
/** Read-ahead of the raw copy: large enough to batch small entries, small enough not to linger (bench/ipa.ts). */
const COPY_WINDOW = 1024 * 1024;

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
  // Unchanged Info.plists were hashed when they were read (planInfoPlists, above): hashing them
  // again would make each nested bundle's seal wait for the scan to reach them.
  const toHash = unchanged
    .filter((e) => !machO.has(e.name) && !records.has(e.name))
    .map((entry) => ({ entry, rank: rank.get(owningBundle(layout, entry.name))! }))
    .sort((a, b) => a.rank - b.rank || a.entry.dataOffset - b.entry.dataOffset)
    .map((x) => x.entry);
  const hashBytes = toHash.reduce((n, e) => n + e.uncompressedSize, 0);
  // The thread, once it has hashed, reads the signed code back from the output for the
  // verification, when the caller verifies (read-back.ts) and the output is a file.
  const output = options.readBackForVerification === true ? sink.file : undefined;
  const thread = source instanceof FileSource && hashBytes >= (options.scanThreadAbove ?? SCAN_THREAD_ABOVE) ? startScanThread(source.path, zip, toHash, records, signal, output?.path) : undefined;
  const scan = thread ?? startScan(zip, toHash, records, signal);
  const readBack = thread?.readBack === undefined ? undefined : new WrittenCodeReadBack(thread.readBack, () => sink.file!.flushed);

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
  let readBackResults: ResignProof['readBack'] = new Map();
  try {
    counts = await signBundles(context, writer, [...machO], copy, readBack);
    await scan.done;
  } catch (error) {
    stop.abort(error);
    throw error;
  } finally {
    // Files not read back by now are left to the verifier; the thread ends after the last one.
    if (readBack !== undefined) readBackResults = readBack.finish();
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
    proof: { inputSize: source.size, copied: proofCopied, written, readBack: readBackResults },
  };
}

/**
 * Schedules every signing job leaf-first and writes their outputs in that fixed order; each signed
 * Mach-O file written is offered to the `readBack`.
 */
async function signBundles(context: Context, writer: ZipWriter, machO: string[], copy: Promise<void>, readBack: WrittenCodeReadBack | undefined): Promise<{ rewritten: number; added: number }> {
  const { layout, zip } = context;
  // Four jobs in flight: each is a pipeline of trips to libuv's pool (read and inflate, sign,
  // compress, write), and with two the pool and the main thread both waited on bench:ipa's 20
  // frameworks (~35 ms each against ~27 with four, the same peak RSS). In-memory files are under
  // STREAM_ABOVE, so the outputs held stay bounded (at most 4 × 2 × 8 MiB).
  const gate = new OrderedGate(Math.max(JOBS_IN_FLIGHT, 2 * context.pool.concurrency));
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
  const executables = new Set(layout.postOrder.map((b) => b.executableEntry.name));
  const isCode = (name: string): boolean => code.has(name) || executables.has(name);
  const counts = { rewritten: 0, added: 0 };
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
    const job = (async () => {
      await Promise.all(dependencies);
      await gate.acquire(ticket);
      context.signal.throwIfAborted();
      // The executable is read (or, streamed, starts to be written) while the bundle's
      // resources may still be hashing; finishBundle waits for them only to seal.
      const deferred = entitlementsAtEnd(context, bundle);
      const stream = await openStream(context.zip, bundle.executableEntry, context.streamAbove, carriesEntitlements(context, bundle) && !deferred);
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
        // Signed code (an unsignable file is copied raw, its digests proved from the input); every
        // file but the app's own executable is sealed by its bundle, whose seal needs its digests.
        const last = writer.entries.at(-1);
        if (readBack !== undefined && isCode(name) && !context.copiedNames.has(name) && last?.name === name) readBack.offer(last, name !== layout.main.executableEntry.name);
      }
      // The files written so far whose bytes are all in the file now go to the thread.
      readBack?.dispatch();
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
    throw error;
  }
  return counts;
}
