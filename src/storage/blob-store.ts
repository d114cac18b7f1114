// The only seam through which Signet touches blob bytes (uploads, signed artifacts). Keys are
// opaque `/`-separated strings built by src/storage/blob-keys.ts; implementations never know
// about tasks, HTTP or SQL. Both implementations (disk, S3) pass the one contract suite in
// test/storage/blob-store.contract.ts.
import type { Readable } from 'node:stream';
import type { DataSource } from '../signing/data-source.ts';

export interface PutOptions {
  /**
   * Refuse the blob when the stream carries more than this many bytes: `put` rejects with
   * AppError `file_too_large` and nothing of the blob remains (no partial object is ever visible).
   */
  maxBytes?: number;
  /** Aborting rejects `put` with the signal's reason and leaves nothing behind. */
  signal?: AbortSignal;
  /** Stored as Content-Type on S3; ignored on disk. */
  contentType?: string;
}

/** What adoptFile honours (the same limits as put; there is no Content-Type to keep on disk). */
export interface AdoptOptions {
  /** Refuse a file larger than this: `file_too_large`, and the file is left where it was. */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Stored as Content-Type on S3; ignored on disk. */
  contentType?: string;
  /**
   * The file's SHA-256 (lowercase hex) when the caller computed it while the file was written
   * (the tus store hashes PATCH bodies on their way to disk): the disk store then takes it instead
   * of reading the file again. Ignored where the bytes are read anyway (S3, a copy across devices).
   */
  sha256?: string;
}

export interface PutResult {
  size: number;
  /** Lowercase hex SHA-256 of the bytes, computed while streaming (never a second read). */
  sha256: string;
}

export interface BlobInfo {
  size: number;
  /** Last modification (ISO 8601). */
  modifiedAt: string;
}

export interface ReadOptions {
  /** First byte, inclusive (default 0). */
  start?: number;
  /** Last byte, INCLUSIVE like HTTP Range (default: the last byte of the blob). */
  end?: number;
  signal?: AbortSignal;
}

export interface BlobStore {
  /** Which implementation this is (for logs and health output). */
  readonly kind: 'disk' | 's3';

  /**
   * Streams `body` into the blob `key`, hashing on the fly; never buffers the whole file.
   * The blob appears atomically when the stream ends (temp file + rename on disk, multipart
   * completion on S3); an existing blob with the same key is replaced. On any failure (stream
   * error, maxBytes exceeded, abort) the partial data is deleted and `put` rejects; `body` is
   * then destroyed (pipeline semantics), so a caller that must keep reading the request after a
   * refusal should pass a stream it can afford to lose (e.g. the multipart file part).
   */
  put(key: string, body: Readable, options?: PutOptions): Promise<PutResult>;

  /**
   * Takes over the finished local file `localPath` as the blob `key` (a resumable upload the
   * tus file store collected), so its bytes are not streamed into a second copy: disk = rename(2)
   * within the same file system (a copy only across devices), S3 = an upload of the file. Hashes
   * it with one read. On success the file is gone from `localPath` and the blob appears
   * atomically, like put; on failure (too large, abort, I/O) no blob remains and the file stays
   * where it was, for its owner to remove.
   */
  adoptFile(localPath: string, key: string, options?: AdoptOptions): Promise<PutResult>;

  /**
   * Opens a read stream over the whole blob or the inclusive byte range [start, end].
   * Rejects with AppError `not_found` when the blob is missing and `range_not_satisfiable` when
   * start/end fall outside it (start > end, start >= size).
   */
  get(key: string, options?: ReadOptions): Promise<Readable>;

  /** Size and modification time, or null when the blob is missing (never throws for missing). */
  stat(key: string): Promise<BlobInfo | null>;

  /** True when the blob exists. */
  exists(key: string): Promise<boolean>;

  /** Deletes the blob; deleting a missing blob is a no-op. */
  delete(key: string): Promise<void>;

  /**
   * Random-access reads of the blob where it is stored, for the engines (which read packages
   * through a DataSource): disk = the file itself; S3 = range GETs with read-ahead, never a
   * download of the whole object. The only way engines read blobs: no store makes local
   * copies. Close it when done. Rejects with `not_found` when the blob is missing; `signal`
   * aborts the reads in flight.
   */
  openSource(key: string, options?: { signal?: AbortSignal }): Promise<DataSource>;

  /**
   * Removes temporary files that dead processes left (partial uploads of a process killed with
   * SIGKILL); returns the bytes freed. Never touches a live process's files.
   */
  sweepLeftovers(): Promise<number>;

  /** Releases clients/handles. The store is unusable afterwards. */
  close(): Promise<void>;
}

/** Runs `fn` with the blob `key` opened by openSource (read where it is stored); closes it after `fn` settles. */
export async function withBlobSource<T>(blobs: BlobStore, key: string, fn: (source: DataSource) => Promise<T>, options: { signal?: AbortSignal } = {}): Promise<T> {
  const source = await blobs.openSource(key, options);
  try {
    return await fn(source);
  } finally {
    await source.close();
  }
}
