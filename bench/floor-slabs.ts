// The floor's reading (bench/floor.ts): the zip's entries from its central directory, and the
// file front to back through a few reused slabs of shared memory, each byte read once.
import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';

export const CHUNK = 1024 * 1024;
// The file is read in slabs of this size (an entry larger than this gets a slab of its own).
export const SLAB = 8 * CHUNK;
// A slab's whole content-digest chunks are split into ranges of at most this size.
const CHUNK_TASK = 4 * CHUNK;
// APPNOTE 4.3.7: local header, then name and extra field of at most 65535 bytes each.
const LOCAL_HEADER = 30;
const MAX_LOCAL_RECORD = LOCAL_HEADER + 2 * 65535;

export interface Entry {
  name: string;
  method: number;
  headerOffset: number;
  dataOffset: number;
  compressedSize: number;
  uncompressedSize: number;
}

/** File bytes [start, end) held in `bytes` from its index 0 (shared with the workers). */
export interface Slab {
  readonly id: number;
  readonly memory: SharedArrayBuffer;
  readonly bytes: Buffer;
  readonly pooled: boolean;
  start: number;
  end: number;
  /** Tasks on this slab's bytes not yet done. */
  tasksLeft: number;
}

/** Free slabs for reuse; at most `limit` pooled ones exist (an oversized entry gets one of its own). */
export class SlabPool {
  readonly #limit: number;
  readonly #free: Slab[] = [];
  readonly #waiters: (() => void)[] = [];
  #created = 0;
  #nextId = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** A slab of at least `size` bytes, once one is free. */
  async acquire(size: number): Promise<Slab> {
    for (;;) {
      const slab = this.#take(size);
      if (slab !== null) return slab;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** acquire() where slabs are released before the next is asked for (one core). */
  acquireNow(size: number): Slab {
    const slab = this.#take(size);
    if (slab === null) throw new Error('no free slab');
    return slab;
  }

  release(slab: Slab): void {
    if (!slab.pooled) return;
    this.#free.push(slab);
    this.#waiters.shift()?.();
  }

  #take(size: number): Slab | null {
    if (size > SLAB) return this.#create(size, false);
    const free = this.#free.pop();
    if (free !== undefined) return free;
    if (this.#created >= this.#limit) return null;
    this.#created += 1;
    return this.#create(SLAB, true);
  }

  #create(size: number, pooled: boolean): Slab {
    const memory = new SharedArrayBuffer(size);
    return { id: this.#nextId++, memory, bytes: Buffer.from(memory), pooled, start: 0, end: 0, tasksLeft: 0 };
  }
}

/**
 * Reads [0, cdOffset) front to back, each byte once: every slab ends after its last whole entry
 * (and any bytes between it and the next), and the bytes read beyond that start the next slab.
 */
export class SlabReader {
  readonly #fd: number;
  readonly #entries: Entry[];
  readonly #cdOffset: number;
  readonly #streamAbove: number;
  #next = 0;
  #at = 0;
  // Bytes [at, at + length) already read, at the end of the previous slab.
  #carried: Buffer | null = null;
  // The index of the next entry to stream (from #next on; entries.length when none is left).
  #nextStreamed = 0;

  /** Entries of `streamAbove` bytes or more (uncompressed) are not read into slabs: see streamNext. */
  constructor(fd: number, entries: Entry[], cdOffset: number, streamAbove = Infinity) {
    this.#fd = fd;
    this.#entries = entries;
    this.#cdOffset = cdOffset;
    this.#streamAbove = streamAbove;
    this.#findStreamed();
  }

  /** The next entry when it is one to stream and every byte before it has been read; null otherwise. */
  streamNext(): Entry | null {
    const entry = this.#entries[this.#next];
    return this.#next === this.#nextStreamed && entry !== undefined && this.#at === entry.headerOffset ? entry : null;
  }

  /** Moves past the entry streamNext gave, once the caller has read it (its dataOffset set). */
  streamed(entry: Entry): void {
    if (this.#entries[this.#next] !== entry || entry.dataOffset < 0) throw new Error(`${entry.name} was not the entry to stream`);
    this.#next += 1;
    this.#at = entry.dataOffset + entry.compressedSize;
    this.#findStreamed();
  }

  #findStreamed(): void {
    this.#nextStreamed = this.#next;
    while (this.#nextStreamed < this.#entries.length && this.#entries[this.#nextStreamed]!.uncompressedSize < this.#streamAbove) this.#nextStreamed++;
  }

  /** The slab size the next read needs: SLAB, or more for an entry that does not fit in one. */
  need(): number {
    const entry = this.#entries[this.#next];
    return entry === undefined ? SLAB : Math.max(SLAB, entry.headerOffset - this.#at + MAX_LOCAL_RECORD + entry.compressedSize);
  }

  /** Whether every byte before the central directory has been read. */
  get done(): boolean {
    return this.#at >= this.#cdOffset;
  }

  /** Fills `slab` with the next bytes (not `done` yet) and lists the entries now whole in it. */
  next(slab: Slab): { slab: Slab; ready: Entry[] } {
    const at = this.#at;
    let filled = 0;
    if (this.#carried !== null) {
      // May be this very slab's end, freed and handed out again: Buffer#copy moves overlapping bytes correctly.
      filled = this.#carried.copy(slab.bytes, 0);
      this.#carried = null;
    }
    // A slab ends where the next entry to stream starts.
    const readEnd = Math.min(this.#cdOffset, at + slab.bytes.length, this.#entries[this.#nextStreamed]?.headerOffset ?? Infinity);
    for (let position = at + filled; position < readEnd; ) position += readSync(this.#fd, slab.bytes, position - at, readEnd - position, position);
    const ready: Entry[] = [];
    let end = at;
    for (; this.#next < this.#entries.length; this.#next++) {
      const entry = this.#entries[this.#next]!;
      if (entry.headerOffset + LOCAL_HEADER > readEnd) break;
      const local = entry.headerOffset - at;
      entry.dataOffset = entry.headerOffset + LOCAL_HEADER + slab.bytes.readUInt16LE(local + 26) + slab.bytes.readUInt16LE(local + 28);
      if (entry.dataOffset + entry.compressedSize > readEnd) break;
      ready.push(entry);
      end = entry.dataOffset + entry.compressedSize;
    }
    // Bytes up to the next entry (a data descriptor, a gap, or the APK Signing Block) belong here.
    const following = this.#entries[this.#next]?.headerOffset ?? this.#cdOffset;
    end = Math.max(end, Math.min(following, readEnd));
    if (end === at) throw new Error(`the entry at ${at} runs past the central directory`);
    this.#carried = end < readEnd ? slab.bytes.subarray(end - at, readEnd - at) : null;
    slab.start = at;
    slab.end = end;
    this.#at = end;
    return { slab, ready };
  }
}

/**
 * The content digest's 1 MiB chunks over [0, cdOffset) as slabs arrive: whole chunks within a
 * slab become tasks; a chunk across a slab's end is put together here (a copy of at most 1 MiB
 * per slab) and hashed on the calling thread.
 */
export class ChunkPlan {
  readonly #partial = Buffer.allocUnsafe(CHUNK);
  #fill = 0;

  /** The whole chunks of `slab`, as ranges of at most CHUNK_TASK bytes to hash. */
  ranges(slab: Slab): Array<{ start: number; end: number }> {
    let at = slab.start;
    if (this.#fill > 0) {
      const take = Math.min(slab.end - at, CHUNK - this.#fill);
      this.#fill += slab.bytes.copy(this.#partial, this.#fill, 0, take);
      at += take;
      if (this.#fill === CHUNK) this.finish();
    }
    const wholeEnd = at + Math.floor((slab.end - at) / CHUNK) * CHUNK;
    const ranges: Array<{ start: number; end: number }> = [];
    for (let from = at; from < wholeEnd; from += CHUNK_TASK) ranges.push({ start: from, end: Math.min(wholeEnd, from + CHUNK_TASK) });
    this.#fill += slab.bytes.copy(this.#partial, this.#fill, wholeEnd - slab.start, slab.end - slab.start);
    return ranges;
  }

  /** Hashes the chunk put together so far (the last one is short). */
  finish(): void {
    if (this.#fill > 0) createHash('sha256').update(this.#partial.subarray(0, this.#fill)).digest();
    this.#fill = 0;
  }
}

/**
 * The entries of a zip from its central directory (APPNOTE 4.3.12; `directory` starts with it),
 * in file order, with no checks (the floor trusts its input). dataOffset is -1 until the local
 * header is read (SlabReader).
 */
export function centralDirectory(directory: Buffer): Entry[] {
  const entries: Entry[] = [];
  for (let at = 0; directory.readUInt32LE(at) === 0x02014b50; ) {
    const method = directory.readUInt16LE(at + 10);
    const compressedSize = directory.readUInt32LE(at + 20);
    const uncompressedSize = directory.readUInt32LE(at + 24);
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    const headerOffset = directory.readUInt32LE(at + 42);
    const name = directory.toString('utf8', at + 46, at + 46 + nameLength);
    // Directories too: they are copied (their content, empty, costs nothing to hash).
    entries.push({ name, method, headerOffset, dataOffset: -1, compressedSize, uncompressedSize });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries.sort((a, b) => a.headerOffset - b.headerOffset);
}

/** The central directory's offset, from the EoCD in `tail` (the file's last bytes). */
export function centralDirectoryOffset(tail: Buffer): number {
  for (let at = tail.length - 22; at >= 0; at--) {
    if (tail.readUInt32LE(at) === 0x06054b50) return tail.readUInt32LE(at + 16);
  }
  throw new Error('no end of central directory');
}

export function readBytes(fd: number, from: number, to: number): Buffer {
  const bytes = Buffer.allocUnsafe(to - from);
  for (let at = from; at < to; ) at += readSync(fd, bytes, at - from, to - at, at);
  return bytes;
}
