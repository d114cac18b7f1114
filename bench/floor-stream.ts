// The iOS floor's large entries (bench/floor.ts): streamed, never held whole, as Signet streams
// them (src/signing/ios/resign/stream-entry.ts). Read into a slab of its size and inflated in one
// call, an 80 MiB executable touched ~130 MB of fresh memory - a page fault per 4 KiB, ~10-20 µs
// each on this kind of VM - and on two cores it was then copied whole into shared memory for the
// workers: the two-core floor was slower than the one-core one, and both hid part of the gap.
//
// Here the compressed bytes are read 1 MiB at a time into two reused buffers, inflated by a zlib
// stream (on libuv's pool: node:zlib has no synchronous streaming inflate) whose output is copied
// into reused 256 KiB pieces. Each piece is page-hashed (and, sealed, digested whole) and CRC'd
// where it was filled, then deflated - in place on one core, by the workers on two - and written
// in order. An entry that is not a Mach-O file is hashed and its compressed bytes written as read.
import { createHash, hash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { readSync } from 'node:fs';
import { createInflateRaw, crc32, type InflateRaw } from 'node:zlib';
import { CHUNK, readBytes, type Entry } from './floor-slabs.ts';
import { isMachO, PAGE, PIECE, rewriteMethod } from './floor-work.ts';

/** Entries from this size on are streamed (Signet's own threshold, resign-ipa.ts STREAM_ABOVE). */
export const STREAM_ABOVE = 8 * CHUNK;
const LOCAL_HEADER = 30;

/** Where a streamed entry's work goes: the deflate of its pieces, and the output. */
export interface StreamTarget {
  /** Reusable piece buffers: at most this many are in flight (deflating or being written). */
  readonly pieces: Buffer[];
  /** A piece's bytes as written: deflated (method 8) or as they are (0), now or later. */
  compress(piece: Buffer, method: number): Uint8Array | Promise<Uint8Array>;
  write(data: Uint8Array): void | Promise<void>;
  /** Whether the next 1 MiB is read and inflating while the current one is worked on (two cores). */
  readAhead: boolean;
}

/** Streams `entry` (whose local header starts at entry.headerOffset) to `target`. */
export async function streamEntry(fd: number, entry: Entry, sealed: boolean, target: StreamTarget): Promise<void> {
  const fixed = readBytes(fd, entry.headerOffset, entry.headerOffset + LOCAL_HEADER);
  entry.dataOffset = entry.headerOffset + LOCAL_HEADER + fixed.readUInt16LE(26) + fixed.readUInt16LE(28);
  await target.write(readBytes(fd, entry.headerOffset, entry.dataOffset));
  const content = new ContentReader(fd, entry, target.readAhead);
  const first = await content.next();
  if (first === null || !isMachO(Buffer.concat(first.content.slice(0, 4)))) {
    // Unchanged: its compressed bytes go out as read, its content is hashed.
    const sha1 = createHash('sha1');
    const sha256 = createHash('sha256');
    for (let step = first; step !== null; step = await content.next()) {
      for (const chunk of step.content) {
        sha1.update(chunk);
        sha256.update(chunk);
      }
      await target.write(step.raw);
    }
    sha1.digest();
    sha256.digest();
    return;
  }
  const rewrite = new Rewriter(target, rewriteMethod(entry), sealed);
  for (let step: Step | null = first; step !== null; step = await content.next()) for (const chunk of step.content) await rewrite.add(chunk);
  await rewrite.finish();
}

interface Step {
  /** Compressed bytes just read (valid until the next call). */
  raw: Buffer;
  /** The content inflated so far, in order (zlib may hand some of it over with a later step). */
  content: Buffer[];
}

/**
 * An entry's compressed bytes, 1 MiB at a time through two buffers in turn, with their content;
 * with `readAhead`, while a step is being worked on, the next one is read and inflating on
 * libuv's pool.
 */
class ContentReader {
  readonly #fd: number;
  readonly #entry: Entry;
  readonly #buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
  readonly #inflater: InflateRaw | null;
  readonly #ended: Promise<void> | null;
  #inflated: Buffer[] = [];
  #at: number;
  #turn = 0;
  #ahead: Promise<Step | null> | null = null;
  readonly #readAhead: boolean;

  constructor(fd: number, entry: Entry, readAhead: boolean) {
    this.#fd = fd;
    this.#readAhead = readAhead;
    this.#entry = entry;
    this.#at = entry.dataOffset;
    this.#inflater = entry.method === 0 ? null : createInflateRaw({ chunkSize: CHUNK });
    this.#inflater?.on('data', (chunk: Buffer) => this.#inflated.push(chunk));
    this.#ended = this.#inflater === null ? null : once(this.#inflater, 'end').then(() => undefined);
    this.#ended?.catch(() => {}); // a zlib error also fails the write it came with
  }

  /** The next step (valid until the next call); with readAhead, the one after it is read meanwhile. */
  async next(): Promise<Step | null> {
    const step = await (this.#ahead ?? this.#read());
    this.#ahead = step === null || !this.#readAhead ? null : this.#read();
    this.#ahead?.catch(() => {}); // awaited by the next call
    return step;
  }

  async #read(): Promise<Step | null> {
    const end = this.#entry.dataOffset + this.#entry.compressedSize;
    if (this.#at >= end) return null;
    const length = Math.min(CHUNK, end - this.#at);
    const raw = this.#buffers[this.#turn++ % 2]!.subarray(0, length);
    for (let done = 0; done < length; ) done += readSync(this.#fd, raw, done, length - done, this.#at + done);
    this.#at += length;
    if (this.#inflater === null) return { raw, content: [raw] };
    // The write's callback comes once zlib has taken all of it; the last write ends the stream,
    // and everything inflated has been emitted at its 'end'.
    await new Promise<void>((resolve, reject) => this.#inflater!.write(raw, (error) => (error ? reject(error) : resolve())));
    if (this.#at >= end) {
      this.#inflater.end();
      await this.#ended;
    }
    const content = this.#inflated;
    this.#inflated = [];
    return { raw, content };
  }
}

/** The new content of a Mach-O file, cut into pieces: hashed as filled, compressed and written in order. */
class Rewriter {
  readonly #target: StreamTarget;
  readonly #method: number;
  readonly #free: Buffer[];
  readonly #whole: Hash[];
  // Pieces handed to `compress`, in order, with the buffer each holds.
  readonly #inFlight: Array<{ out: Uint8Array | Promise<Uint8Array>; buffer: Buffer }> = [];
  #piece: Buffer;
  #fill = 0;
  #crc = 0;

  constructor(target: StreamTarget, method: number, sealed: boolean) {
    this.#target = target;
    this.#method = method;
    this.#free = [...target.pieces];
    this.#whole = sealed ? [createHash('sha1'), createHash('sha256')] : [];
    this.#piece = this.#free.pop()!;
  }

  async add(content: Buffer): Promise<void> {
    for (let at = 0; at < content.length; ) {
      const take = Math.min(PIECE - this.#fill, content.length - at);
      content.copy(this.#piece, this.#fill, at, at + take);
      this.#fill += take;
      at += take;
      if (this.#fill === PIECE) await this.#send();
    }
  }

  async finish(): Promise<void> {
    if (this.#fill > 0) await this.#send();
    while (this.#inFlight.length > 0) await this.#writeOldest();
    for (const h of this.#whole) h.digest();
  }

  async #send(): Promise<void> {
    const piece = this.#piece.subarray(0, this.#fill);
    // PIECE is a whole number of pages: a piece's pages are the file's.
    for (let at = 0; at < piece.length; at += PAGE) hash('sha256', piece.subarray(at, at + PAGE), 'buffer');
    for (const h of this.#whole) h.update(piece);
    this.#crc = crc32(piece, this.#crc);
    this.#inFlight.push({ out: this.#target.compress(piece, this.#method), buffer: this.#piece });
    while (this.#free.length === 0) await this.#writeOldest();
    this.#piece = this.#free.pop()!;
    this.#fill = 0;
  }

  async #writeOldest(): Promise<void> {
    const { out, buffer } = this.#inFlight.shift()!;
    await this.#target.write(await out);
    this.#free.push(buffer);
  }
}
