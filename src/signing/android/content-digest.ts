// The content digest that v2, v3 and v3.1 signatures protect (apksig ApkSigningBlockUtils
// computeContentDigests): the file is seen as three sections - entries (everything before the
// APK Signing Block), central directory, and end of central directory with its CD offset field
// replaced by the signing block's offset - each cut into 1 MiB chunks that never span sections.
//   chunkDigest = H(0xa5 || u32le(chunkLength) || chunk)
//   contentDigest = H(0x5a || u32le(chunkCount) || chunkDigest...)
// v2, v3 and v3.1 signers using the same algorithm share one digest: it is computed once per
// algorithm, never per scheme.
// The digester is fed bytes in any pieces, so the signer can hash the output while writing it
// instead of reading it back. A chunk that arrives whole in one piece (the signer hands over its
// 1 MiB output batches, which start at offset 0 as the chunks do; the verifier's read blocks are
// aligned the same way) is hashed where it lies. Other bytes are copied into one reusable chunk
// buffer - callers may reuse their pieces at once, which keeps the reader's blocks a fixed ring -
// and hashed there when it is full. With `parallel`, every other chunk goes to libuv's thread
// pool through WebCrypto instead (which copies it when the job is created).
// Measured with bench/apk.ts (191 MiB, 2 cores, SHA extensions): SHA-256 runs at ~1.7 GB/s on
// one thread, the copy at several times that; the earlier version hashed every chunk on the
// pool, which also does the reads, writes and large inflations and so became the slower side.
import { createHash } from 'node:crypto';
import type { DataSource } from '../data-source.ts';
import { SigningError } from '../errors.ts';
import type { ContentDigestAlgorithm } from './algorithms.ts';

export const CHUNK_SIZE = 1024 * 1024;
// apksig: the chunk count is a signed 32-bit integer.
const MAX_CHUNKS = 0x7fffffff;
const PREFIX = 5;
// Chunks hashed on the thread pool and not yet finished before writers are asked to wait
// (each holds a 1 MiB copy).
const MAX_IN_FLIGHT = 4;

export type ChunkedAlgorithm = Exclude<ContentDigestAlgorithm, 'VERITY_CHUNKED_SHA256'>;
const NODE_HASH: Record<ChunkedAlgorithm, 'sha256' | 'sha512'> = { CHUNKED_SHA256: 'sha256', CHUNKED_SHA512: 'sha512' };
const WEB_HASH: Record<ChunkedAlgorithm, 'SHA-256' | 'SHA-512'> = { CHUNKED_SHA256: 'SHA-256', CHUNKED_SHA512: 'SHA-512' };

export function isChunkedAlgorithm(algorithm: ContentDigestAlgorithm): algorithm is ChunkedAlgorithm {
  return algorithm !== 'VERITY_CHUNKED_SHA256';
}

/**
 * The chunk digests of the first `end` bytes of the entries section (a whole number of chunks),
 * taken earlier by reading those bytes back from the output file (sign/digest-thread.ts).
 */
export interface ContentPrefix {
  readonly end: number;
  readonly chunks: ReadonlyMap<ChunkedAlgorithm, readonly Buffer[]>;
}

/** H(0xa5 || u32le(length) || chunk) for one chunk. */
export function chunkDigest(algorithm: ChunkedAlgorithm, chunk: Uint8Array): Buffer {
  return createHash(NODE_HASH[algorithm]).update(header(0xa5, chunk.length)).update(chunk).digest();
}

export interface ChunkedDigesterOptions {
  /**
   * Hash every other chunk on the thread pool. Worth it where the calling thread has little
   * else to do (verification); the signer's main thread is busier, but so is its pool.
   */
  readonly parallel?: boolean;
  /** Chunk digests taken elsewhere for the start of the first section; the bytes given begin after it. */
  readonly prefix?: ContentPrefix;
}

export class ChunkedDigester {
  private readonly algorithms: readonly ChunkedAlgorithm[];
  private readonly parallel: boolean;
  private readonly chunkDigests: Map<ChunkedAlgorithm, (Buffer | Promise<ArrayBuffer>)[]>;
  // 0xa5, u32 length, then the chunk's bytes; reused for every chunk.
  private readonly chunk = Buffer.allocUnsafe(PREFIX + CHUNK_SIZE);
  private fill = PREFIX;
  private chunks = 0;
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private finished = false;

  constructor(algorithms: Iterable<ChunkedAlgorithm>, options: ChunkedDigesterOptions = {}) {
    this.algorithms = [...new Set(algorithms)];
    this.parallel = options.parallel ?? false;
    this.chunkDigests = new Map(this.algorithms.map((algorithm) => [algorithm, []]));
    this.chunk[0] = 0xa5;
    const { prefix } = options;
    if (prefix !== undefined) {
      if (prefix.end % CHUNK_SIZE !== 0 || this.algorithms.some((a) => prefix.chunks.get(a)?.length !== prefix.end / CHUNK_SIZE)) throw new Error('internal: a content prefix must be whole chunks of every algorithm');
      for (const algorithm of this.algorithms) this.chunkDigests.get(algorithm)!.push(...prefix.chunks.get(algorithm)!);
      this.chunks = prefix.end / CHUNK_SIZE;
    }
  }

  /** Adds bytes to the current section (copied: the caller may reuse `data` at once). */
  update(data: Uint8Array): void {
    if (this.finished) throw new Error('ChunkedDigester.update after digests()');
    let offset = 0;
    while (offset < data.length) {
      if (this.fill === PREFIX && data.length - offset >= CHUNK_SIZE && !this.offloadsNext()) {
        // A whole chunk in the caller's bytes (the signer's 1 MiB output batches, the verifier's
        // read blocks): hashed where it lies, without the copy.
        this.hashChunk(data.subarray(offset, offset + CHUNK_SIZE));
        offset += CHUNK_SIZE;
        continue;
      }
      const take = Math.min(PREFIX + CHUNK_SIZE - this.fill, data.length - offset);
      this.chunk.set(offset === 0 && take === data.length ? data : data.subarray(offset, offset + take), this.fill);
      this.fill += take;
      offset += take;
      if (this.fill === PREFIX + CHUNK_SIZE) this.flushChunk();
    }
  }

  /** Resolves once few enough chunks wait for the thread pool; writers await it to bound memory. */
  async ready(): Promise<void> {
    while (this.inFlight > MAX_IN_FLIGHT) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Ends a section: its last chunk may be short, and the next section starts a new chunk. */
  endSection(): void {
    if (this.fill > PREFIX) this.flushChunk();
  }

  /** The final content digest per algorithm. Ends the current section. */
  async digests(): Promise<Map<ChunkedAlgorithm, Buffer>> {
    this.endSection();
    this.finished = true;
    if (this.chunks > MAX_CHUNKS) throw new SigningError('apk_invalid', `too many 1 MiB chunks (${this.chunks}) for a content digest`);
    const result = new Map<ChunkedAlgorithm, Buffer>();
    for (const algorithm of this.algorithms) {
      const hash = createHash(NODE_HASH[algorithm]).update(header(0x5a, this.chunks));
      for (const chunk of this.chunkDigests.get(algorithm)!) hash.update(chunk instanceof Buffer ? chunk : new Uint8Array(await chunk));
      result.set(algorithm, hash.digest());
    }
    return result;
  }

  private flushChunk(): void {
    this.chunk.writeUInt32LE(this.fill - PREFIX, 1);
    const bytes = this.chunk.subarray(0, this.fill);
    this.fill = PREFIX;
    if (!this.offloadsNext()) {
      this.hashChunk(bytes.subarray(PREFIX));
      return;
    }
    for (const algorithm of this.algorithms) {
      this.inFlight += 1;
      const digest = crypto.subtle.digest(WEB_HASH[algorithm], bytes);
      // Settled either way; a rejection surfaces from digests().
      digest.then(() => this.settled(), () => this.settled());
      this.chunkDigests.get(algorithm)!.push(digest);
    }
    this.chunks += 1;
  }

  /** Whether the next chunk goes to the thread pool (every other one, with `parallel`). */
  private offloadsNext(): boolean {
    return this.parallel && this.chunks % 2 === 1;
  }

  /** Hashes one chunk's bytes on this thread. */
  private hashChunk(data: Uint8Array): void {
    for (const algorithm of this.algorithms) this.chunkDigests.get(algorithm)!.push(chunkDigest(algorithm, data));
    this.chunks += 1;
  }

  private settled(): void {
    this.inFlight -= 1;
    if (this.inFlight > MAX_IN_FLIGHT || this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

function header(marker: number, value: number): Buffer {
  const out = Buffer.allocUnsafe(PREFIX);
  out[0] = marker;
  out.writeUInt32LE(value, 1);
  return out;
}

/** Digests of sections read from sources, in 1 MiB reads. */
export async function computeContentDigests(sections: readonly DataSource[], algorithms: Iterable<ChunkedAlgorithm>): Promise<Map<ChunkedAlgorithm, Buffer>> {
  const digester = new ChunkedDigester(algorithms, { parallel: true });
  for (const section of sections) {
    for (let offset = 0; offset < section.size; offset += CHUNK_SIZE) {
      digester.update(await section.read(offset, Math.min(CHUNK_SIZE, section.size - offset)));
      await digester.ready();
    }
    digester.endSection();
  }
  return await digester.digests();
}
