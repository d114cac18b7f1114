// Hashing an app's files as they inflate (SHA-1 for CodeResources `files`, SHA-256 for
// `files2`; symlinks yield their target) and recognising Mach-O files by their magic, never by
// name. Two shapes: `scanEntries` does both in one pass (the verifier), while the re-signer first
// `sniffMachO`s the entry heads, then `startScan`s the hashing in the background so signing can
// proceed alongside. Memory stays bounded: entries stream through in small chunks.
import { createHash } from 'node:crypto';
import { constants as zlib, inflateRawSync } from 'node:zlib';
import { SigningError } from '../../errors.ts';
import type { DataSource } from '../../data-source.ts';
import type { ZipEntry, ZipLimits, ZipReader } from '../../zip/index.ts';
import { METHOD_STORED } from '../../zip/format.ts';
import { readContentChunks, type EntryLocation } from '../../zip/entry-content.ts';
import type { BundleFile } from '../code-resources/index.ts';
import { ReadAheadSource } from './read-ahead.ts';
import { isMachO } from '../macho/parse.ts';
import { PathIndex } from './path-index.ts';

export type FileRecord =
  | { readonly kind: 'file'; readonly sha1: Buffer; readonly sha256: Buffer }
  | { readonly kind: 'symlink'; readonly target: string };

export interface ScanResult {
  records: Map<string, FileRecord>;
  /** Entries whose content starts like a Mach-O file (outside dSYM companions). */
  machO: Set<string>;
}

// PATH_MAX on Darwin; a longer "symlink" is not one.
const MAX_SYMLINK = 1024;
const CONCURRENCY = 4;
// The probes need a few hundred bytes per entry: a small window serves runs of small entries
// in one read without reading whole large files past (measured on bench/ipa.ts: 4 MiB windows
// read ~100 MB and left ~70 MB of buffers to the GC, 256 KiB ones ~40 MB, in half the time).
const SNIFF_WINDOW = 256 * 1024;
const SNIFF_RUNS = 3;
// Each hashing lane's window: 4 MiB ones kept ~40 MB more memory live and as garbage, for no gain
// in time (bench/ipa.ts, 2,000 resources of 20-40 KiB).
const SCAN_WINDOW = 256 * 1024;
// The re-signer's background hashing runs beside the copy and the signing: two lanes keep both
// cores busy, four only added in-flight buffers (bench/ipa.ts: ~12 MB more peak RSS, no faster).
const SCAN_LANES = 2;

export async function scanEntries(zip: ZipReader, entries: readonly ZipEntry[], signal?: AbortSignal): Promise<ScanResult> {
  const records = new Map<string, FileRecord>();
  const machO = new Set<string>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < entries.length) {
      signal?.throwIfAborted();
      const entry = entries[next++]!;
      if (entry.isSymlink) {
        records.set(entry.name, { kind: 'symlink', target: await readSymlink(zip, entry) });
        continue;
      }
      const result = await hashEntry(zip.source, entry, zip.limits, !isInDsym(entry.name));
      if (result === 'macho') machO.add(entry.name);
      else records.set(entry.name, result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, entries.length) }, lane));
  return { records, machO };
}

export async function readSymlink(zip: ZipReader, entry: ZipEntry): Promise<string> {
  const target = (await zip.readEntry(entry, MAX_SYMLINK)).toString('utf8');
  if (target === '' || target.includes('\0')) throw new SigningError('ipa_invalid', `the symlink ${entry.name} has an empty or invalid target`, { details: { path: entry.name } });
  return target;
}

/** `dSYM` companions hold MH_DSYM files that are sealed as resources, never signed. */
export function isInDsym(name: string): boolean {
  return /\.dSYM\//i.test(name);
}

/** SHA-1 + SHA-256 of an entry's content as it inflates (checked: CRC-32, size, bombs); 'macho' when `sniff` finds code. */
export async function hashEntry(source: DataSource, entry: EntryLocation, limits: ZipLimits, sniff: boolean): Promise<Extract<FileRecord, { kind: 'file' }> | 'macho'> {
  const sha1 = createHash('sha1');
  const sha256 = createHash('sha256');
  let head: Buffer | null = sniff ? Buffer.alloc(0) : null;
  // The zip reader's checked inflation (CRC-32, size, bomb limits), over the caller's window.
  for await (const chunk of readContentChunks(source, entry, limits)) {
    if (head !== null) {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      if (head.length < 8) continue;
      if (isMachO(head)) return 'macho';
      sha1.update(head);
      sha256.update(head);
      head = null;
      continue;
    }
    sha1.update(chunk);
    sha256.update(chunk);
  }
  if (head !== null) {
    sha1.update(head);
    sha256.update(head);
  }
  return { kind: 'file', sha1: sha1.digest(), sha256: sha256.digest() };
}

/**
 * The records under a bundle's `dir`, as the paths relative to it that CodeResources seals.
 * `names`: where to look; every record's path unless the caller narrowed them (PathIndex.under).
 */
export function filesUnder(records: ReadonlyMap<string, FileRecord>, dir: string, names: Iterable<string> = records.keys()): BundleFile[] {
  const files: BundleFile[] = [];
  for (const name of names) {
    if (!name.startsWith(dir)) continue;
    const record = records.get(name)!;
    const path = name.slice(dir.length);
    files.push(record.kind === 'symlink' ? { kind: 'symlink', path, target: record.target } : { kind: 'file', path, sha1: record.sha1, sha256: record.sha256 });
  }
  return files;
}

/** Digests of bytes the re-signer produced itself (Info.plist, profiles, CodeResources). */
export function recordOf(bytes: Uint8Array): Extract<FileRecord, { kind: 'file' }> {
  return { kind: 'file', sha1: createHash('sha1').update(bytes).digest(), sha256: createHash('sha256').update(bytes).digest() };
}

// ---- re-signer: sniff first, then hash while signing ------------------------------------------

/**
 * Which entries are Mach-O files, from their first bytes only: stored entries are read directly,
 * deflated ones have their first compressed bytes inflated (256 bytes of deflate expand to at
 * most ~264 KiB, so the probe is bounded). Knowing the code up front lets signing start while
 * the resources are still being hashed.
 *
 * The probe starts at 64 compressed bytes and grows only when they held too little (a dynamic
 * Huffman block's header alone can take ~100): all of a probe's output is made, and on text
 * 256 bytes of deflate are already kilobytes - bench:ipa's 1,000 text resources inflated ~21 KiB
 * each, nearly whole, and sniffing took twice as long as with 64-byte probes.
 */
export async function sniffMachO(zip: ZipReader, entries: readonly ZipEntry[]): Promise<Set<string>> {
  const found = new Set<string>();
  const probed = [...entries]
    .filter((e) => !(e.isSymlink || e.isDirectory || e.uncompressedSize < 8 || isInDsym(e.name)))
    .sort((a, b) => a.dataOffset - b.dataOffset);
  // In file order, in a few contiguous runs side by side, each through its own read-ahead
  // window: one run alone waits on every window read in turn. The probes inflate synchronously:
  // a trip to libuv's pool costs more than decoding a few hundred bytes (measured: twice as slow).
  const per = Math.ceil(probed.length / SNIFF_RUNS);
  await Promise.all(
    Array.from({ length: SNIFF_RUNS }, async (_, run) => {
      const source = new ReadAheadSource(zip.source, SNIFF_WINDOW);
      for (const entry of probed.slice(run * per, (run + 1) * per)) {
        if (isMachO(await head(source, entry))) found.add(entry.name);
      }
    }),
  );
  return found;
}

async function head(source: DataSource, entry: ZipEntry): Promise<Buffer> {
  if (entry.method === METHOD_STORED) return source.read(entry.dataOffset, 8);
  for (const probe of [64, 256, 4096]) {
    const length = Math.min(probe, entry.compressedSize);
    try {
      const out = inflateRawSync(await source.read(entry.dataOffset, length), { finishFlush: zlib.Z_SYNC_FLUSH, chunkSize: 4096, maxOutputLength: 8 * 1024 * 1024 });
      if (out.length >= 8 || length === entry.compressedSize) return out;
    } catch (cause) {
      throw new SigningError('zip_invalid', `entry ${JSON.stringify(entry.name)} has corrupt deflate data: ${(cause as Error).message}`, { cause, details: { name: entry.name } });
    }
  }
  return Buffer.alloc(0);
}

/** Hashing that runs in the background; bundles wait only for the files under their folder. */
export interface BackgroundScan {
  records: Map<string, FileRecord>;
  /** Resolves when every scanned entry under `dir` has its record; rejects if the scan fails. */
  settledUnder(dir: string): Promise<void>;
  /** Resolves when everything is hashed (rejects with the first failure). */
  done: Promise<void>;
}

/** Hashes `entries`, in the order given, in the background into `records`. */
export function startScan(zip: ZipReader, entries: readonly ZipEntry[], records: Map<string, FileRecord>, signal?: AbortSignal): BackgroundScan {
  const progress = new ScanProgress(entries, records);
  // Entries are taken in the caller's order (the re-signer puts leaf bundles' files first, so
  // their signing can start early). The lanes take neighbouring entries, so they share one
  // read-ahead window: with one window each, both would read nearly every byte.
  const lanes = Math.min(SCAN_LANES, entries.length);
  const source = new ReadAheadSource(zip.source, SCAN_WINDOW);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < entries.length) {
      const entry = entries[next++]!;
      try {
        signal?.throwIfAborted();
        const record = entry.isSymlink ? { kind: 'symlink' as const, target: await readSymlink(zip, entry) } : await hashEntry(source, entry, zip.limits, false);
        progress.settle(entry.name, record as FileRecord);
      } catch (error) {
        progress.fail(entry.name, error);
        throw error;
      }
    }
  };
  return progress.scan(Promise.all(Array.from({ length: lanes }, lane)).then(() => undefined));
}

/**
 * Which entries of a background scan have their record: what startScan and its thread variant
 * (scan-thread.ts) share. Bundles wait only for the entries under their folder.
 */
export class ScanProgress {
  private readonly records: Map<string, FileRecord>;
  private readonly settled = new Map<string, Promise<void>>();
  private readonly resolvers = new Map<string, { resolve: () => void; reject: (e: unknown) => void }>();
  private readonly paths: PathIndex;

  constructor(entries: readonly ZipEntry[], records: Map<string, FileRecord>) {
    this.records = records;
    for (const entry of entries) {
      const promise = new Promise<void>((resolve, reject) => this.resolvers.set(entry.name, { resolve, reject }));
      promise.catch(() => {}); // surfaced through `done` and the waiting bundle
      this.settled.set(entry.name, promise);
    }
    this.paths = new PathIndex(this.settled.keys());
  }

  settle(name: string, record: FileRecord): void {
    this.records.set(name, record);
    this.resolvers.get(name)!.resolve();
  }

  fail(name: string, error: unknown): void {
    this.resolvers.get(name)?.reject(error);
  }

  /** The scan whose work is `done` (rejecting with the first failure). */
  scan(done: Promise<void>): BackgroundScan {
    done.catch(() => {});
    // A failed or aborted scan leaves the entries after the failure unsettled: waiters fail with
    // it rather than wait for entries no one will hash.
    const failure = new Promise<never>((_, reject) => done.catch(reject));
    failure.catch(() => {});
    return {
      records: this.records,
      done,
      settledUnder: (dir) => Promise.race([Promise.all(this.paths.under(dir).map((name) => this.settled.get(name)!)).then(() => undefined), failure]),
    };
  }
}
