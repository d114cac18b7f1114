// The verifier's one pass over an APK's bytes: the v1 content digests of the entries the JAR
// manifest protects and the v2/v3/v3.1 chunked content digests are taken from the same
// sequential read, rather than reading (and, for the entries, inflating) the file once per
// scheme. The chunk hashing runs on the thread pool (content-digest.ts) while the main thread
// inflates and hashes entries.
import type { ZipEntry } from '../../zip/index.ts';
import type { OpenedApk } from '../apk/open.ts';
import { ChunkedDigester, type ChunkedAlgorithm } from '../content-digest.ts';
import { EntryContentHasher } from '../sign/entry-digest.ts';
import { SequentialReader } from '../sign/sequential-reader.ts';
import { setEocdCentralDirectoryOffset } from '../sign/zip-records.ts';

export interface ContentPassRequest {
  /** Entries whose uncompressed content to digest, with Node hash names (v1). */
  readonly entries: ReadonlyMap<ZipEntry, readonly string[]>;
  /** Chunked content digests to compute, over the sections delimited by the signing block at `blockOffset`. */
  readonly chunked: readonly ChunkedAlgorithm[];
  readonly blockOffset: number | null;
}

export interface ContentPassResult {
  readonly entries: Map<ZipEntry, Buffer[]>;
  readonly chunked: Map<ChunkedAlgorithm, Buffer>;
}

/** Throws zip_invalid for an entry whose data does not inflate to its declared size and CRC. */
export async function digestApkContents(apk: OpenedApk, request: ContentPassRequest): Promise<ContentPassResult> {
  const entries = new Map<ZipEntry, Buffer[]>();
  const digester = request.chunked.length > 0 && request.blockOffset !== null ? new ChunkedDigester(request.chunked) : null;
  if (digester === null && request.entries.size === 0) return { entries, chunked: new Map() };
  // The entries section ends at the signing block (or, without one, at the central directory).
  const end = digester === null ? apk.entriesSectionEnd : request.blockOffset!;
  const input = new SequentialReader(apk.source, 0, end);
  const feed = async (piece: Buffer): Promise<void> => {
    digester?.update(piece);
    await digester?.ready();
  };
  for (const entry of apk.zip.entriesInFileOrder()) {
    const algorithms = request.entries.get(entry);
    if (algorithms === undefined) continue;
    await input.take(entry.dataOffset - input.position, feed);
    const hasher = new EntryContentHasher(entry, algorithms, { checkCrc: true });
    await input.take(entry.compressedSize, async (piece) => {
      await feed(piece);
      await hasher.update(piece);
    });
    entries.set(entry, await hasher.digest());
  }
  if (digester === null) return { entries, chunked: new Map() };
  await input.take(end - input.position, feed);
  digester.endSection();
  const geometry = apk.zip.geometry;
  digester.update(await apk.source.read(geometry.centralDirectoryOffset, geometry.centralDirectorySize));
  digester.endSection();
  // The EoCD is digested as if the central directory began at the block.
  digester.update(setEocdCentralDirectoryOffset(geometry.eocd, request.blockOffset!));
  digester.endSection();
  return { entries, chunked: await digester.digests() };
}
