// JAR (v1) digests of entry contents, computed from the raw bytes as they stream past (the
// signer copies them, the verifier only reads them), so each entry is read once: stored data is
// hashed as is, deflated data is inflated on the side - small entries in one synchronous call
// once all their bytes are in, large ones through a zlib stream whose work runs on libuv's
// thread pool, in parallel with the main thread.
import { once } from 'node:events';
import { createHash, type Hash } from 'node:crypto';
import { constants as zlibConstants, crc32, createInflateRaw, inflateRawSync, type InflateRaw } from 'node:zlib';
import { SigningError } from '../../errors.ts';

const INFLATE_CHUNK = 64 * 1024;
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

export class EntryContentHasher {
  private readonly entry: HashedEntry;
  private readonly hashes: Hash[];
  private readonly deflated: boolean;
  private readonly small: boolean;
  private readonly checkCrc: boolean;
  private crc = 0;
  private smallPieces: Buffer[] = [];
  private inflater: InflateRaw | null = null;
  private inflateError: unknown = null;
  private produced = 0;

  /**
   * `algorithms`: Node hash names, one digest each. `checkCrc`: also verify the CRC-32 of the
   * uncompressed data (APPNOTE 4.4.7) - the verifier does, apksig's signer does not.
   */
  constructor(entry: HashedEntry, algorithms: readonly string[], options: { checkCrc?: boolean } = {}) {
    this.entry = entry;
    this.hashes = algorithms.map((algorithm) => createHash(algorithm));
    this.deflated = entry.method !== 0;
    this.small = entry.compressedSize <= SMALL_COMPRESSED && entry.uncompressedSize <= SMALL_UNCOMPRESSED;
    this.checkCrc = options.checkCrc ?? false;
  }

  /** The entry's raw (stored or deflated) bytes, in order. `raw` is not kept past the call unless small. */
  async update(raw: Buffer): Promise<void> {
    if (!this.deflated) {
      this.account(raw);
      return;
    }
    if (this.small) {
      this.smallPieces.push(raw);
      return;
    }
    if (this.inflater === null) {
      // Large output chunks: fewer callbacks into JS for big dex files. finishFlush SYNC: a
      // truncated stream is reported by the size check below rather than as a bare zlib error.
      this.inflater = createInflateRaw({ chunkSize: INFLATE_CHUNK, finishFlush: zlibConstants.Z_SYNC_FLUSH });
      this.inflater.on('data', (chunk: Buffer) => this.account(chunk));
      this.inflater.on('error', (error) => {
        this.inflateError ??= error;
      });
    }
    if (this.inflateError !== null) throw this.corrupt(this.inflateError);
    // zlib copies nothing: the input must stay valid until it is consumed, hence the wait.
    // (once() also settles, rejecting, on 'error', and then removes both of its listeners.)
    if (!this.inflater.write(raw)) await once(this.inflater, 'drain').catch(() => undefined);
  }

  /** One digest per algorithm, in the constructor's order; throws zip_invalid for bad data. */
  async digest(): Promise<Buffer[]> {
    if (this.deflated && this.small) {
      let data: Buffer;
      try {
        const raw = this.smallPieces.length === 1 ? this.smallPieces[0]! : Buffer.concat(this.smallPieces);
        // One output buffer of the declared size (+1 so that over-production is seen, not
        // silently cut): zlib's default 16 KiB chunk would be allocated for every small file.
        const outputSize = this.entry.uncompressedSize + 1;
        data = inflateRawSync(raw, { maxOutputLength: outputSize, chunkSize: Math.max(outputSize, zlibConstants.Z_MIN_CHUNK), finishFlush: zlibConstants.Z_SYNC_FLUSH });
      } catch (cause) {
        if ((cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw this.tooLarge();
        throw this.corrupt(cause);
      }
      this.smallPieces = [];
      this.account(data);
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
