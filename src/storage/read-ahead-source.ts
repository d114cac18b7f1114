// A DataSource over a store that answers byte ranges (S3 GET with Range): the engines' random
// access reads become range requests, so a package is read where it is stored instead of being
// downloaded whole first. Hand-written: no maintained library turns ranged GETs into a positional
// read API.
//
// Reads are served from aligned blocks kept in a small LRU cache. A miss fetches every missing
// block the read spans in ONE request; when reads run sequentially (each starting where the last
// one ended, as an entry is streamed), the request is extended ahead, doubling up to
// `maxReadAhead`, like a kernel's readahead. Concurrent reads of the same block share one request.
import type { DataSource } from '../signing/data-source.ts';

/** Bytes [start, end) of the object, exactly end - start of them. */
export type RangeFetch = (start: number, end: number, signal?: AbortSignal) => Promise<Buffer>;

export interface ReadAheadOptions {
  /** Cache granularity (default 256 KiB). */
  blockSize?: number;
  /** Most bytes a sequential miss fetches beyond the read (default 8 MiB). */
  maxReadAhead?: number;
  /** Blocks kept (default 64: 16 MiB with the default block size). */
  cacheBlocks?: number;
  signal?: AbortSignal;
}

export class ReadAheadSource implements DataSource {
  readonly size: number;
  readonly #fetch: RangeFetch;
  readonly #blockSize: number;
  readonly #maxAheadBlocks: number;
  readonly #cacheBlocks: number;
  readonly #signal: AbortSignal | undefined;
  /** Block index → its bytes (pending or fetched); Map order is the LRU order. */
  readonly #blocks = new Map<number, Promise<Buffer>>();
  #lastEnd = -1;
  #aheadBlocks = 0;
  #closed = false;

  constructor(size: number, fetch: RangeFetch, options: ReadAheadOptions = {}) {
    this.size = size;
    this.#fetch = fetch;
    this.#blockSize = options.blockSize ?? 256 * 1024;
    this.#maxAheadBlocks = Math.max(0, Math.floor((options.maxReadAhead ?? 8 * 1024 * 1024) / this.#blockSize));
    this.#cacheBlocks = Math.max(2, options.cacheBlocks ?? 64);
    this.#signal = options.signal;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    if (this.#closed) throw new Error('read from a closed source');
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > this.size) {
      throw new RangeError(`read of ${length} bytes at ${offset} is outside a source of ${this.size} bytes`);
    }
    if (length === 0) return Buffer.alloc(0);
    const bs = this.#blockSize;
    const first = Math.floor(offset / bs);
    const last = Math.floor((offset + length - 1) / bs);
    const sequential = offset === this.#lastEnd;
    this.#aheadBlocks = sequential ? Math.min(this.#maxAheadBlocks, Math.max(1, this.#aheadBlocks * 2)) : 0;
    this.#lastEnd = offset + length;
    const parts = this.#blocksFor(first, last, this.#aheadBlocks);
    const buffers = await Promise.all(parts);
    if (first === last) {
      const start = offset - first * bs;
      return buffers[0]!.subarray(start, start + length);
    }
    const out = Buffer.allocUnsafe(length);
    let written = 0;
    for (let i = 0; i < buffers.length; i += 1) {
      const block = buffers[i]!;
      const from = i === 0 ? offset - first * bs : 0;
      const to = Math.min(block.length, offset + length - (first + i) * bs);
      written += block.copy(out, written, from, to);
    }
    return out;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#blocks.clear();
  }

  /** Promises of blocks first..last, fetching the missing ones (plus `ahead` more) in one request. */
  #blocksFor(first: number, last: number, ahead: number): Promise<Buffer>[] {
    const lastBlock = Math.floor((this.size - 1) / this.#blockSize);
    let missingFirst = -1;
    let missingLast = -1;
    for (let b = first; b <= last; b += 1) {
      if (!this.#blocks.has(b)) {
        if (missingFirst === -1) missingFirst = b;
        missingLast = b;
      }
    }
    if (missingFirst !== -1) {
      // Read ahead only into blocks not cached yet.
      let end = missingLast;
      while (end < Math.min(lastBlock, missingLast + ahead) && !this.#blocks.has(end + 1)) end += 1;
      this.#fetchBlocks(missingFirst, end);
    }
    const parts: Promise<Buffer>[] = [];
    for (let b = first; b <= last; b += 1) {
      const block = this.#blocks.get(b)!;
      // Touch: most recently used goes last.
      this.#blocks.delete(b);
      this.#blocks.set(b, block);
      parts.push(block);
    }
    this.#evict();
    return parts;
  }

  #fetchBlocks(first: number, last: number): void {
    const bs = this.#blockSize;
    const start = first * bs;
    const end = Math.min(this.size, (last + 1) * bs);
    const range = this.#fetch(start, end, this.#signal).then((bytes) => {
      if (bytes.length !== end - start) throw new Error(`the store answered ${bytes.length} bytes for the range [${start}, ${end})`);
      return bytes;
    });
    for (let b = first; b <= last; b += 1) {
      const block = range.then((bytes) => bytes.subarray((b - first) * bs, Math.min(bytes.length, (b - first + 1) * bs)));
      // A failed fetch is not cached: the next read asks again.
      block.catch(() => {
        if (this.#blocks.get(b) === block) this.#blocks.delete(b);
      });
      this.#blocks.set(b, block);
    }
  }

  #evict(): void {
    for (const key of this.#blocks.keys()) {
      if (this.#blocks.size <= this.#cacheBlocks) break;
      this.#blocks.delete(key);
    }
  }
}
