// The verifier's one pass over an APK's bytes: the v1 content digests of the entries the JAR
// manifest protects and the v2/v3/v3.1 chunked content digests are taken from the same
// sequential read, rather than reading (and, for the entries, inflating) the file once per
// scheme. Half of the chunks are hashed on the thread pool (content-digest.ts) while the main
// thread hashes the others and inflates and hashes entries.
//
// Written-entry digests (the signer checking its own output): a v1 digest is a function of an
// entry's bytes only, and the signer took it from the very bytes it wrote (SignApkResult.written).
// Where an entry sits exactly where the signer wrote it, the pass uses that digest instead of
// inflating and hashing the entry again - provisionally: the digest stands only if the chunked
// content digest recomputed here from the file matches a verified v2/v3 signature, which proves
// that every byte before the signing block, entry data included, is what the signer hashed. The
// caller (verify-apk.ts) re-digests the provisional entries otherwise. `signet verify` passes no
// written digests and so always recomputes everything.
import type { ZipEntry } from '../../zip/index.ts';
import type { OpenedApk } from '../apk/open.ts';
import { ChunkedDigester, type ChunkedAlgorithm, type ContentPrefix } from '../content-digest.ts';
import { PendingDigests } from '../sign/entry-digest.ts';
import { SequentialReader } from '../sign/sequential-reader.ts';
import { setEocdCentralDirectoryOffset } from '../sign/zip-records.ts';

/** A v1 digest the signer took of an entry's uncompressed content (CRC-32 checked) from the bytes it wrote at `dataOffset`. */
export interface WrittenEntryDigest {
  readonly dataOffset: number;
  readonly compressedSize: number;
  /** Node hash name. */
  readonly algorithm: string;
  readonly digest: Buffer;
}

export interface ContentPassRequest {
  /** Entries whose uncompressed content to digest, with Node hash names (v1). */
  readonly entries: ReadonlyMap<ZipEntry, readonly string[]>;
  /** Chunked content digests to compute, over the sections delimited by the signing block at `blockOffset`. */
  readonly chunked: readonly ChunkedAlgorithm[];
  readonly blockOffset: number | null;
  /** The signer's digests by entry name, used provisionally (see above) when the chunked digests cover the entries. */
  readonly written?: ReadonlyMap<string, WrittenEntryDigest>;
  /**
   * The chunk digests of the start of the file, read back from it by the signer (with `written`):
   * used when no entry there needs reading for its own digest, and then only those bytes after it are read.
   */
  readonly prefix?: ContentPrefix;
}

export interface ContentPassResult {
  readonly entries: Map<ZipEntry, Buffer[]>;
  readonly chunked: Map<ChunkedAlgorithm, Buffer>;
  /** Entries whose digests are the signer's, standing only if the chunked digests verify. */
  readonly provisional: ReadonlySet<ZipEntry>;
}

/** Throws zip_invalid for an entry whose data does not inflate to its declared size and CRC. */
export async function digestApkContents(apk: OpenedApk, request: ContentPassRequest): Promise<ContentPassResult> {
  const pending = new PendingDigests<ZipEntry>();
  const provisional = new Map<ZipEntry, Buffer[]>();
  const digestsContent = request.chunked.length > 0 && request.blockOffset !== null;
  // What is read: the entries without a usable written digest, and the content digests' bytes.
  const toRead = new Map<ZipEntry, readonly string[]>();
  for (const [entry, algorithms] of request.entries) {
    const known = digestsContent ? writtenDigest(request.written, entry, algorithms) : undefined;
    if (known === undefined) toRead.set(entry, algorithms);
    else provisional.set(entry, [known]);
  }
  const { prefix } = request;
  const usePrefix = digestsContent && prefix !== undefined && prefix.end <= request.blockOffset! && [...toRead.keys()].every((entry) => entry.dataOffset >= prefix.end) && request.chunked.every((a) => prefix.chunks.has(a));
  const digester = digestsContent ? new ChunkedDigester(request.chunked, { parallel: true, ...(usePrefix ? { prefix } : {}) }) : null;
  if (digester === null && toRead.size === 0) return { entries: new Map(), chunked: new Map(), provisional: new Set() };
  // The entries section ends at the signing block (or, without one, at the central directory).
  const end = digester === null ? apk.entriesSectionEnd : request.blockOffset!;
  const input = new SequentialReader(apk.source, usePrefix ? prefix.end : 0, end);
  const feed = async (piece: Buffer): Promise<void> => {
    digester?.update(piece);
    await digester?.ready();
  };
  for (const entry of apk.zip.entriesInFileOrder()) {
    const algorithms = toRead.get(entry);
    if (algorithms === undefined) continue;
    await input.take(entry.dataOffset - input.position, feed);
    const hasher = pending.hasher(entry, algorithms, { checkCrc: true });
    await input.take(entry.compressedSize, async (piece) => {
      await feed(piece);
      await hasher.update(piece);
    });
    await pending.add(entry, hasher);
  }
  if (digester === null) return { entries: await pending.all(), chunked: new Map(), provisional: new Set() };
  await input.take(end - input.position, feed);
  digester.endSection();
  const geometry = apk.zip.geometry;
  digester.update(await apk.source.read(geometry.centralDirectoryOffset, geometry.centralDirectorySize));
  digester.endSection();
  // The EoCD is digested as if the central directory began at the block.
  digester.update(setEocdCentralDirectoryOffset(geometry.eocd, request.blockOffset!));
  digester.endSection();
  const chunked = await digester.digests();
  const entries = await pending.all();
  for (const [entry, digests] of provisional) entries.set(entry, digests);
  return { entries, chunked, provisional: new Set(provisional.keys()) };
}

/** The signer's digest of `entry` when it covers exactly the bytes and the one algorithm asked for. */
function writtenDigest(written: ReadonlyMap<string, WrittenEntryDigest> | undefined, entry: ZipEntry, algorithms: readonly string[]): Buffer | undefined {
  const known = written?.get(entry.name);
  if (known === undefined || algorithms.length !== 1 || algorithms[0] !== known.algorithm) return undefined;
  if (known.dataOffset !== entry.dataOffset || known.compressedSize !== entry.compressedSize) return undefined;
  return known.digest;
}
