// JAR (v1) digests of entry contents, computed from the raw bytes as they stream past (the
// signer copies them, the verifier only reads them), so each entry is read once: stored data is
// hashed as is, deflated data is inflated on the side - small entries in one synchronous call
// once all their bytes are in, large ones through a zlib stream whose work runs on libuv's
// thread pool. A large entry's digest completes in the background: the caller moves on to the
// next entries while the pool inflates (PendingDigests bounds how many do so at once). Measured
// with bench/apk.ts (six 10 MiB dex files): waiting for each inflation, in 64 KiB steps, kept
// the main thread idle for ~300 ms of a 0.8 s signing.
import { once } from 'node:events';
import { createHash, type Hash } from 'node:crypto';
import { constants as zlibConstants, crc32, createInflateRaw, inflateRawSync, type InflateRaw } from 'node:zlib';
import { SigningError } from '../../errors.ts';
import { droppedBuffers, droppedOneShotOutput } from '../../reclaim.ts';

// Inflated bytes per step on the pool (each step is one job and one callback on the thread that
// hashes them). With a 256 KiB malloc mmap threshold, 512 KiB steps cost ~0.1 s of page faults;
// under bin/signet's 4 MiB threshold they cost memory instead: `signet sign` of bench:apk,
// 12 alternating pairs, 0.965 against 0.980 s but 114.4 against 111.1 MiB of peak RSS (256 KiB:
// 0.975 s, 111.6 MiB).
const INFLATE_CHUNK = 128 * 1024;
// Compressed bytes queued for one inflater before its writer waits, and the size of the copies
// that hold them until zlib has consumed them (the reader's blocks are reused meanwhile). Half a
// MiB rather than one: the same time on bench:apk (12 alternating pairs, 0.995 s both ways) and
// 3 MiB less peak RSS (110.4 against 113.4 MiB), the two sides of a shared dex phase
// (digest-thread.ts SHARED) each holding less.
const INFLATE_QUEUE = 512 * 1024;
const INFLATE_COPY = 512 * 1024;
// Entries inflating in the background at once (each pins up to INFLATE_QUEUE of input).
const BACKGROUND_LIMIT = 2;
// Deflated entries this small (both ways) are inflated in one call rather than streamed: a
// stream costs more than the inflation for the thousands of small files in apps, and the
// uncompressed bound keeps a very compressible entry from being inflated into one big buffer.
const SMALL_COMPRESSED = 1024 * 1024;
const SMALL_UNCOMPRESSED = 4 * 1024 * 1024;

/** What the hasher needs to know about an entry (a ZipEntry fits). */
export interface HashedEntry {
  readonly name: string;
  readonly method: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly crc32: number;
}

/** Whether an entry's digest completes on libuv's pool after its last bytes (a large deflated entry, inflated by a stream). */
export function inflatesInBackground(entry: HashedEntry): boolean {
  return entry.method !== 0 && !inflatesInOneCall(entry);
}

/** Whether a deflated entry is small enough both ways to be inflated in one call (see SMALL_COMPRESSED). */
function inflatesInOneCall(entry: HashedEntry): boolean {
  return entry.compressedSize <= SMALL_COMPRESSED && entry.uncompressedSize <= SMALL_UNCOMPRESSED;
}

export class EntryContentHasher {
  private readonly entry: HashedEntry;
  private readonly hashes: Hash[];
  private readonly deflated: boolean;
  private readonly small: boolean;
  private readonly checkCrc: boolean;
  private crc = 0;
  // A small deflated entry's raw bytes, gathered for one inflation call.
  private smallRaw: Buffer | null = null;
  private smallLength = 0;
  private inflater: InflateRaw | null = null;
  private inflateError: unknown = null;
  private produced = 0;
  private readonly spare: Buffer[];

  /**
   * `algorithms`: Node hash names, one digest each. `checkCrc`: also verify the CRC-32 of the
   * uncompressed data (APPNOTE 4.4.7) - apksig's signer does not. `spare`: copy buffers for
   * zlib's input, shared by the hashers of one pass (PendingDigests.hasher) so that they are
   * reused rather than left for the garbage collector.
   */
  constructor(entry: HashedEntry, algorithms: readonly string[], options: { checkCrc?: boolean; spare?: Buffer[] } = {}) {
    this.entry = entry;
    this.spare = options.spare ?? [];
    this.hashes = algorithms.map((algorithm) => createHash(algorithm));
    this.deflated = entry.method !== 0;
    this.small = inflatesInOneCall(entry);
    this.checkCrc = options.checkCrc ?? false;
  }

  /** See inflatesInBackground. */
  get background(): boolean {
    return this.deflated && !this.small;
  }

  /** The entry's raw (stored or deflated) bytes, in order; `raw` may be reused once the promise settles. */
  async update(raw: Buffer): Promise<void> {
    if (!this.deflated) {
      this.account(raw);
      return;
    }
    if (this.small) {
      this.smallRaw ??= Buffer.allocUnsafe(this.entry.compressedSize);
      if (this.smallLength + raw.length > this.smallRaw.length) throw this.corrupt(new Error('more raw bytes than the compressed size'));
      this.smallLength += raw.copy(this.smallRaw, this.smallLength);
      return;
    }
    if (this.inflater === null) {
      // finishFlush SYNC: a truncated stream is reported by the size check below rather than as
      // a bare zlib error.
      // zlib streams are Transform streams and take their buffering options too.
      const options = { chunkSize: INFLATE_CHUNK, finishFlush: zlibConstants.Z_SYNC_FLUSH, writableHighWaterMark: INFLATE_QUEUE };
      this.inflater = createInflateRaw(options);
      this.inflater.on('data', (chunk: Buffer) => {
        this.account(chunk);
        droppedBuffers(chunk.length);
      });
      this.inflater.on('error', (error) => {
        this.inflateError ??= error;
      });
    }
    if (this.inflateError !== null) throw this.corrupt(this.inflateError);
    // zlib keeps a reference to its input until consumed, so it gets a copy; beyond
    // INFLATE_QUEUE bytes queued, wait. (once() also settles, rejecting, on 'error', and then
    // removes both of its listeners.)
    for (let done = 0; done < raw.length; done += INFLATE_COPY) {
      const buffer = this.spare.pop() ?? Buffer.allocUnsafe(INFLATE_COPY);
      const length = raw.copy(buffer, 0, done, Math.min(raw.length, done + INFLATE_COPY));
      // The callback runs once zlib has consumed the bytes: the buffer is free again.
      const queued = this.inflater.write(buffer.subarray(0, length), () => this.spare.push(buffer));
      if (!queued) await once(this.inflater, 'drain').catch(() => undefined);
    }
  }

  /** One digest per algorithm, in the constructor's order; throws zip_invalid for bad data. */
  async digest(): Promise<Buffer[]> {
    if (this.deflated && this.small) {
      let data: Buffer;
      const outputSize = this.entry.uncompressedSize + 1;
      try {
        const raw = this.smallRaw === null ? Buffer.alloc(0) : this.smallRaw.subarray(0, this.smallLength);
        // One output buffer of the declared size (+1 so that over-production is seen, not
        // silently cut): zlib's default 16 KiB chunk would be allocated for every small file.
        data = inflateRawSync(raw, { maxOutputLength: outputSize, chunkSize: Math.max(outputSize, zlibConstants.Z_MIN_CHUNK), finishFlush: zlibConstants.Z_SYNC_FLUSH });
      } catch (cause) {
        if ((cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw this.tooLarge();
        throw this.corrupt(cause);
      }
      this.account(data);
      droppedOneShotOutput(outputSize);
      this.smallRaw = null;
    }
    if (this.inflater !== null) {
      const ended = once(this.inflater, 'end');
      this.inflater.end();
      try {
        await ended;
      } catch (cause) {
        throw this.corrupt(cause);
      }
      if (this.inflateError !== null) throw this.corrupt(this.inflateError);
    }
    const quoted = JSON.stringify(this.entry.name);
    if (this.deflated && this.produced !== this.entry.uncompressedSize) {
      throw new SigningError('zip_invalid', `entry ${quoted} inflates to ${this.produced} bytes, not the declared ${this.entry.uncompressedSize}`, { details: { name: this.entry.name } });
    }
    if (this.checkCrc && this.crc >>> 0 !== this.entry.crc32) {
      throw new SigningError('zip_invalid', `entry ${quoted} fails its CRC-32 check`, { details: { name: this.entry.name } });
    }
    return this.hashes.map((hash) => hash.digest());
  }

  private account(chunk: Buffer): void {
    this.produced += chunk.length;
    if (this.deflated && this.produced > this.entry.uncompressedSize) {
      const error = this.tooLarge();
      this.inflateError ??= error;
      if (this.inflater === null) throw error;
      this.inflater.destroy(error);
      return;
    }
    if (this.checkCrc) this.crc = crc32(chunk, this.crc);
    for (const hash of this.hashes) hash.update(chunk);
  }

  private tooLarge(): SigningError {
    return new SigningError('zip_invalid', `entry ${JSON.stringify(this.entry.name)} inflates to more than its declared ${this.entry.uncompressedSize} bytes`, { details: { name: this.entry.name } });
  }

  private corrupt(cause: unknown): SigningError {
    if (cause instanceof SigningError) return cause;
    return new SigningError('zip_invalid', `entry ${JSON.stringify(this.entry.name)} has corrupt deflate data: ${(cause as Error).message}`, { cause, details: { name: this.entry.name } });
  }
}

/**
 * Entry digests by key, some completing in the background: at most BACKGROUND_LIMIT large
 * entries inflate at once; adding one more waits for the oldest. A failure surfaces from all().
 */
export class PendingDigests<K> {
  private readonly spare: Buffer[] = [];
  private readonly digests = new Map<K, Promise<Buffer[]>>();
  private readonly background: Promise<Buffer[]>[] = [];

  /** A hasher for one entry of this pass (sharing its copy buffers). */
  hasher(entry: HashedEntry, algorithms: readonly string[], options: { checkCrc?: boolean } = {}): EntryContentHasher {
    return new EntryContentHasher(entry, algorithms, { ...options, spare: this.spare });
  }

  async add(key: K, hasher: EntryContentHasher): Promise<void> {
    const digest = hasher.digest();
    // Awaited in all() (or below); until then a rejection must not count as unhandled.
    digest.catch(() => {});
    this.digests.set(key, digest);
    if (!hasher.background) return;
    this.background.push(digest);
    if (this.background.length > BACKGROUND_LIMIT) await this.background.shift();
  }

  /** Every digest, once all are done; rejects with the first failure in insertion order. */
  async all(): Promise<Map<K, Buffer[]>> {
    const done = new Map<K, Buffer[]>();
    for (const [key, digest] of this.digests) done.set(key, await digest);
    return done;
  }
}

/**
 * Where the signer sends each kept entry's raw bytes for its v1 digest: hashed on this thread
 * (InProcessDigests) or on a thread of their own (DigestThread). Entries are named by their index
 * in the list given to `start`; `all` returns one digest per entry, in that order.
 */
export interface EntryDigestPass {
  /** The entries to digest and the Node hash name of their digest. */
  start(entries: readonly HashedEntry[], algorithm: string): void;
  /** The entry's raw bytes, in order; `raw` may be reused once the call (or its promise) returns. */
  update(index: number, raw: Buffer): void | Promise<void>;
  /** All of the entry has been given (an empty entry gets no `update`). */
  end(index: number): void | Promise<void>;
  all(): Promise<Buffer[]>;
}

/** v1 digests hashed on the calling thread, with the CRC-32 checked (the signer's small-APK path). */
export class InProcessDigests implements EntryDigestPass {
  private readonly pending = new PendingDigests<number>();
  private entries: readonly HashedEntry[] = [];
  private algorithm = '';
  private hasher: EntryContentHasher | null = null;

  start(entries: readonly HashedEntry[], algorithm: string): void {
    this.entries = entries;
    this.algorithm = algorithm;
  }

  async update(index: number, raw: Buffer): Promise<void> {
    this.hasher ??= this.pending.hasher(this.entries[index]!, [this.algorithm], { checkCrc: true });
    await this.hasher.update(raw);
  }

  async end(index: number): Promise<void> {
    const hasher = this.hasher ?? this.pending.hasher(this.entries[index]!, [this.algorithm], { checkCrc: true });
    this.hasher = null;
    await this.pending.add(index, hasher);
  }

  async all(): Promise<Buffer[]> {
    const digests = await this.digests();
    return this.entries.map((_, index) => digests.get(index)!);
  }

  /** The digests of the entries that were given, by index (for a pass that hashes only some here). */
  async digests(): Promise<Map<number, Buffer>> {
    return new Map([...(await this.pending.all())].map(([index, [digest]]) => [index, digest!]));
  }
}
