// The true floor of re-signing a package, shared by bench/ipa.ts and bench/apk.ts: the fastest
// honest single pass over the same file doing only the work no signer can avoid — read every
// byte once, inflate each deflated entry once (zlib.inflateRawSync), take the digests the format
// needs from that one inflation, recompress what must be rewritten, write the output — on one
// core, or spread over both cores with worker_threads. No parsing of signatures, no signing, no
// verification, no zip validation: a real signer does strictly more.
//
//   ios: every entry's content gets SHA-1 + SHA-256 (CodeResources `files` and `files2`), except
//        Mach-O files (found by their magic), which are rewritten: SHA-256 of each 4 KiB page
//        (the code directory), SHA-1 + SHA-256 of the whole file when it is sealed by a parent
//        bundle (frameworks), CRC-32 of the new content, and recompression at level 1 (the ratio
//        of a `zip -1` input) of those the input deflated, in independent 256 KiB pieces (as pigz
//        does) so both cores share a large file; stored ones stay stored, and so do those the
//        input's deflate shrank by less than 0.5 % (random or packed code: the ratio is kept);
//        within the others, a piece whose first 4 KiB do not shrink is written as stored blocks.
//   apk: SHA-256 of every entry's content (v1 manifest) and the v2/v3 chunked content digest
//        (SHA-256 of each 1 MiB chunk of the entries, central directory and EoCD), once: v2 and
//        v3 with the same algorithm share it. Nothing is recompressed (entries are copied raw).
//
// Output: the unchanged entries first (copied raw, as a signer may do while it computes), then
// the rewritten ones, then the central directory.
//
// On two cores (THREADS 2): two workers share the file's memory (SharedArrayBuffer). The main
// thread reads the central directory, then the file front to back in 16 MiB reads, and hands
// each entry to the workers as soon as its bytes are in (in batches, BATCH: one message per
// small entry left the workers idle for a round trip each), while libuv's pool writes the
// entries a worker found unchanged (the worker's inflation is the only look at their content).
// Rewritten content goes to shared memory once, so the main thread writes it
// and either worker deflates its pieces without a copy each. Measured on bench:ipa's scale-1
// apps and bench:apk's APK, this two-core floor is 0.67 / 1.3 / 0.49 s where the first version
// (whole file read first, one message per entry, content copied between threads) took 0.78 /
// 1.83 / 0.64 s and was no faster than one core on the random app. One large file's page hashes
// and CRC-32 are taken by the thread that read it: sharing them between the workers piece by
// piece (per-piece CRC-32s combine as in zlib's crc32_combine) was tried and measured, with no
// change beyond the noise on either scale-1 app (random 0.84-1.10 s against 0.86-0.92 s,
// code-like 1.53-1.57 s against 1.56-1.57 s, interleaved runs).
//
// Run as `node bench/floor.ts ios|apk FILE OUT THREADS`: prints one JSON line {ms, cpu, rss}.
import { createHash, hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

const PAGE = 4096;
const CHUNK = 1024 * 1024;
// The file is read (and, for apk, its content digest handed out) in steps of this size.
const READ = 16 * CHUNK;
const PIECE = 256 * 1024;
const SAMPLE = 4 * 1024;
const MAX_STORED = 65535;
// Work sent to a worker at once (compressed bytes of small entries; a larger entry goes alone).
const BATCH = 1024 * 1024;
// ... and at most this many (a last batch of a thousand tiny entries would run alone).
const BATCH_TASKS = 128;
const MACHO_MAGICS = new Set([0xcffaedfe, 0xcefaedfe, 0xcafebabe, 0xfeedfacf]);

type Kind = 'ios' | 'apk';
interface Entry {
  name: string;
  method: number;
  headerOffset: number;
  dataOffset: number;
  compressedSize: number;
  uncompressedSize: number;
}
/** Work on bytes as read: an entry, or a run of content-digest chunks. */
type ReadTask = { type: 'entry'; entry: Entry; sealed: boolean } | { type: 'chunks'; start: number; end: number };
/** One unit of work: a ReadTask, or a piece of rewritten content to deflate. */
type Task = ReadTask | { type: 'deflate'; piece: Uint8Array; id: number };

export async function runFloor(kind: Kind, file: string, out: string, threads: number): Promise<{ ms: number; cpu: number; rss: number }> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const fd = openSync(file, 'r');
  const size = fstatSync(fd).size;
  // The whole file, read once into memory the workers share: its end first (the central
  // directory lists the entries), then front to back.
  const shared = new SharedArrayBuffer(size);
  const workers = threads > 1 ? startWorkers(kind, shared, threads) : [];
  const bytes = Buffer.from(shared);
  const tailStart = Math.max(0, size - 22 - 65535);
  readRange(fd, bytes, tailStart, size);
  const cdOffset = centralDirectoryOffset(bytes);
  readRange(fd, bytes, cdOffset, tailStart);
  const entries = centralDirectory(bytes, cdOffset);
  const rewritten = new Map<string, Uint8Array[]>();
  // Write: the entries that stay as they were first (a signer copies them raw, and may do so
  // while it computes, as the re-signer does), then the rewritten ones with their new data, then
  // the directory. Only the iOS re-signer rewrites entries; apk has none.
  const output = threads <= 1 ? await onOneCore(kind, fd, bytes, entries, cdOffset, out, rewritten) : await onWorkers(kind, fd, bytes, entries, cdOffset, out, workers, rewritten);
  closeSync(fd);
  for (const entry of entries) {
    const pieces = rewritten.get(entry.name);
    if (pieces === undefined) continue;
    await output.write(bytes, entry.headerOffset, entry.dataOffset - entry.headerOffset);
    for (const piece of pieces) await output.write(piece);
  }
  await output.write(bytes, cdOffset, size - cdOffset);
  await output.close();
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpu: (cpu.user + cpu.system) / 1000, rss: process.resourceUsage().maxRSS * 1024 };
}

/** Reads the rest of the file, then computes and writes the unchanged entries, one after the other. */
async function onOneCore(kind: Kind, fd: number, bytes: Buffer, entries: Entry[], cdOffset: number, out: string, rewritten: Map<string, Uint8Array[]>): Promise<Output> {
  readRange(fd, bytes, 0, cdOffset);
  for (const entry of entries) entry.dataOffset = dataOffsetOf(bytes, entry);
  for (const task of tasksFor(kind, entries, 0, bytes.length)) {
    const pieces = runTask(kind, bytes, task);
    if (pieces !== null && task.type === 'entry') rewritten.set(task.entry.name, pieces.map((p) => deflatePiece(p.piece, p.method)));
  }
  // Synchronous writes: one core.
  const outFd = openSync(out, 'w');
  const output: Output = { write: async (data, offset = 0, length = data.length - offset) => void writeSync(outFd, data, offset, length), close: async () => closeSync(outFd) };
  await writeUnchanged(output, bytes, entries.filter((e) => !rewritten.has(e.name)));
  return output;
}

/**
 * Reads the rest of the file front to back; each entry goes to the workers as soon as its bytes
 * are in and, once a worker found it unchanged, to the output (written on libuv's pool while the
 * workers compute).
 */
async function onWorkers(kind: Kind, fd: number, bytes: Buffer, entries: Entry[], cdOffset: number, out: string, workers: Worker[], rewritten: Map<string, Uint8Array[]>): Promise<Output> {
  const handle = await open(out, 'w');
  const output: Output = { write: async (data, offset, length) => void (await handle.write(data, offset, length)), close: () => handle.close() };
  let copied = Promise.resolve();
  const pool = new Dispatcher(workers, rewritten, (unchanged) => void (copied = copied.then(() => writeUnchanged(output, bytes, unchanged))));
  let next = 0;
  for (let at = 0; at < cdOffset; ) {
    const end = Math.min(cdOffset, at + READ);
    readRange(fd, bytes, at, end);
    const ready: Entry[] = [];
    for (; next < entries.length && entries[next]!.headerOffset + 30 <= end; next++) {
      const entry = entries[next]!;
      entry.dataOffset = dataOffsetOf(bytes, entry);
      if (entry.dataOffset + entry.compressedSize > end) break;
      ready.push(entry);
    }
    pool.add(tasksFor(kind, ready, at, end === cdOffset ? bytes.length : end));
    at = end;
    // Lets the workers' results in, so that they are given more work.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await pool.finish();
  await copied;
  return output;
}

function readRange(fd: number, bytes: Buffer, from: number, to: number): void {
  for (let at = from; at < to; ) at += readSync(fd, bytes, at, Math.min(READ, to - at), at);
}

/**
 * The work on `entries` (iOS: each sealed when inside a framework) and, for apk, on the content
 * digest's chunks in [from, to), largest first so that the last task to finish is a small one.
 */
function tasksFor(kind: Kind, entries: readonly Entry[], from: number, to: number): ReadTask[] {
  const tasks: ReadTask[] = entries.map((entry) => ({ type: 'entry', entry, sealed: kind === 'ios' && entry.name.includes('.framework/') }));
  // The content digest covers everything up to the central directory, then the directory and EoCD.
  if (kind === 'apk') for (let at = from; at < to; at += READ) tasks.push({ type: 'chunks', start: at, end: Math.min(to, at + READ) });
  return tasks.sort((a, b) => cost(b) - cost(a));
}

/** Sequential writes to the output file. */
interface Output {
  write(data: Uint8Array, offset?: number, length?: number): Promise<void>;
  close(): Promise<void>;
}

interface Rewrite {
  piece: Uint8Array;
  method: number;
}

/**
 * The work of one entry or content-digest task, on whichever thread runs it: the new content of a
 * rewritten entry (a Mach-O file), in pieces for deflating, else null.
 */
function runTask(kind: Kind, bytes: Buffer, task: ReadTask): Rewrite[] | null {
  if (task.type === 'chunks') {
    for (let at = task.start; at < task.end; at += CHUNK) createHash('sha256').update(bytes.subarray(at, Math.min(task.end, at + CHUNK))).digest();
    return null;
  }
  const { entry } = task;
  const raw = bytes.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
  const content = entry.method === 0 ? raw : inflateRawSync(raw);
  if (kind === 'apk') {
    createHash('sha256').update(content).digest();
    return null;
  }
  if (!(content.length >= 4 && MACHO_MAGICS.has(content.readUInt32BE(0)))) {
    createHash('sha1').update(content).digest();
    createHash('sha256').update(content).digest();
    return null;
  }
  // One-shot: ~15 % faster on 4 KiB pages than a Hash object per page.
  for (let at = 0; at < content.length; at += PAGE) hash('sha256', content.subarray(at, at + PAGE), 'buffer');
  if (task.sealed) {
    createHash('sha1').update(content).digest();
    createHash('sha256').update(content).digest();
  }
  crc32(content);
  // What the input's deflate saved decides: almost nothing (< 0.5 %, random or packed code) →
  // stored, which keeps the ratio within 0.5 %; otherwise deflated again.
  const method = entry.method === 0 || entry.compressedSize >= 0.995 * entry.uncompressedSize ? 0 : 8;
  const pieces: Rewrite[] = [];
  for (let at = 0; at < content.length; at += PIECE) pieces.push({ piece: content.subarray(at, Math.min(content.length, at + PIECE)), method });
  return pieces;
}

function deflatePiece(piece: Uint8Array, method: number): Uint8Array {
  // Stored stays stored; a deflated entry is recompressed at level 1 in independent pieces,
  // each ended by a full flush so they concatenate into one valid stream. A piece whose first
  // 4 KiB do not shrink at level 1 (random or packed code, which `zip -1` deflates when headers
  // and padding save it a percent) becomes stored blocks, a copy: deflating it would only cost
  // time — the re-signer's rule too (src/signing/zip/deflate-pieces.ts).
  if (method === 0) return piece;
  const sample = piece.subarray(0, SAMPLE);
  if (deflateRawSync(sample, { level: 1 }).length >= sample.length * 0.98) return storedBlocks(piece);
  return deflateRawSync(piece, { level: 1, finishFlush: 3 /* Z_FULL_FLUSH */ });
}

/** RFC 1951 §3.2.4 stored blocks (not final: a full flush ends the other pieces alike). */
function storedBlocks(piece: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(piece.length + Math.max(1, Math.ceil(piece.length / MAX_STORED)) * 5);
  let at = 0;
  for (let from = 0; from < piece.length || at === 0; from += MAX_STORED) {
    const length = Math.min(MAX_STORED, piece.length - from);
    out[at] = 0;
    out.writeUInt16LE(length, at + 1);
    out.writeUInt16LE(~length & 0xffff, at + 3);
    out.set(piece.subarray(from, from + length), at + 5);
    at += 5 + length;
  }
  return out;
}

/** A task's size, for ordering and batching. */
function cost(t: Task): number {
  return t.type === 'entry' ? t.entry.compressedSize : t.type === 'chunks' ? t.end - t.start : t.piece.length;
}

function startWorkers(kind: Kind, shared: SharedArrayBuffer, threads: number): Worker[] {
  return Array.from({ length: Math.min(threads, availableParallelism()) }, () => new Worker(fileURLToPath(import.meta.url), { workerData: { kind, shared } }));
}

/**
 * Hands tasks to the workers as they come (add), in batches of about BATCH bytes (a large entry
 * alone): one message per small entry would leave both workers idle for a round trip each,
 * thousands of times over.
 */
class Dispatcher {
  readonly #workers: Worker[];
  readonly #rewritten: Map<string, Uint8Array[]>;
  readonly #idle: Set<Worker>;
  readonly #queue: Task[] = [];
  readonly #slots = new Map<number, { name: string; index: number }>();
  readonly #finished = Promise.withResolvers<void>();
  /** Each busy worker's batch. */
  readonly #sent = new Map<Worker, Task[]>();
  #nextId = 0;
  #adding = true;

  /** `unchanged`: told of the entries a batch found unchanged (not rewritten), once it is done. */
  constructor(workers: Worker[], rewritten: Map<string, Uint8Array[]>, unchanged: (entries: Entry[]) => void) {
    this.#workers = workers;
    this.#rewritten = rewritten;
    this.#idle = new Set(workers);
    for (const w of workers) {
      w.on('error', (error) => this.#finished.reject(error));
      w.on('message', (message: { rewrites: Array<[string, Rewrite[]]>; deflated: Array<{ id: number; piece: Uint8Array }> }) => {
        this.#idle.add(w);
        this.#results(message.rewrites, message.deflated);
        const names = new Set(message.rewrites.map(([name]) => name));
        unchanged(this.#sent.get(w)!.flatMap((t) => (t.type === 'entry' && !names.has(t.entry.name) ? [t.entry] : [])));
        this.#dispatch();
      });
    }
  }

  add(tasks: Task[]): void {
    this.#queue.push(...tasks);
    this.#dispatch();
  }

  /** Resolves once every task added is done. */
  async finish(): Promise<void> {
    this.#adding = false;
    this.#dispatch();
    await this.#finished.promise;
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }

  #results(rewrites: Array<[string, Rewrite[]]>, deflated: Array<{ id: number; piece: Uint8Array }>): void {
    for (const [name, pieces] of rewrites) {
      const out: Uint8Array[] = new Array(pieces.length);
      this.#rewritten.set(name, out);
      pieces.forEach((p, index) => {
        if (p.method === 0) out[index] = p.piece;
        else {
          const id = this.#nextId++;
          this.#slots.set(id, { name, index });
          // Pieces go to the front of the queue: they are the large work left.
          this.#queue.unshift({ type: 'deflate', piece: p.piece, id });
        }
      });
    }
    for (const { id, piece } of deflated) {
      const slot = this.#slots.get(id)!;
      this.#rewritten.get(slot.name)![slot.index] = piece;
    }
  }

  #dispatch(): void {
    for (const w of [...this.#idle]) {
      const tasks = this.#batch();
      if (tasks.length === 0) break;
      this.#idle.delete(w);
      this.#sent.set(w, tasks);
      // Pieces are views of shared memory: posted, not copied.
      w.postMessage(tasks);
    }
    if (!this.#adding && this.#queue.length === 0 && this.#idle.size === this.#workers.length) this.#finished.resolve();
  }

  #batch(): Task[] {
    const taken: Task[] = [];
    let bytes = 0;
    while (this.#queue.length > 0 && (taken.length === 0 || (bytes + cost(this.#queue[0]!) <= BATCH && taken.length < BATCH_TASKS))) {
      const task = this.#queue.shift()!;
      bytes += cost(task);
      taken.push(task);
    }
    return taken;
  }
}

function workerLoop(): void {
  const { kind, shared } = workerData as { kind: Kind; shared: SharedArrayBuffer };
  const bytes = Buffer.from(shared);
  parentPort!.on('message', (tasks: Task[]) => {
    const rewrites: Array<[string, Rewrite[]]> = [];
    const deflated: Array<{ id: number; piece: Uint8Array }> = [];
    const transfer: ArrayBuffer[] = [];
    for (const task of tasks) {
      if (task.type === 'deflate') {
        const piece = deflatePiece(Buffer.from(task.piece.buffer, task.piece.byteOffset, task.piece.byteLength), 8);
        deflated.push({ id: task.id, piece });
        // A piece that owns its memory is handed over, not copied.
        if (piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength && !transfer.includes(piece.buffer as ArrayBuffer)) transfer.push(piece.buffer as ArrayBuffer);
        continue;
      }
      const pieces = runTask(kind, bytes, task);
      if (pieces !== null && task.type === 'entry') rewrites.push([task.entry.name, inSharedMemory(pieces)]);
    }
    parentPort!.postMessage({ rewrites, deflated }, transfer);
  });
}

/**
 * The pieces of one entry's new content in shared memory (copied there once from zlib's buffer
 * when inflated, already there when stored), so that the main thread writes them and any worker
 * deflates them without a copy each.
 */
function inSharedMemory(pieces: Rewrite[]): Rewrite[] {
  const memory = pieces[0]?.piece.buffer;
  if (memory === undefined || memory instanceof SharedArrayBuffer) return pieces;
  const copy = new SharedArrayBuffer(memory.byteLength);
  new Uint8Array(copy).set(new Uint8Array(memory));
  return pieces.map((p) => ({ method: p.method, piece: new Uint8Array(copy, p.piece.byteOffset, p.piece.byteLength) }));
}

/** Writes the entries given (local header and data, as in the input) in file order. */
async function writeUnchanged(output: Output, bytes: Buffer, given: readonly Entry[]): Promise<void> {
  const entries = [...given].sort((a, b) => a.headerOffset - b.headerOffset);
  // Runs of adjacent entries go out in one write.
  for (let i = 0; i < entries.length; ) {
    const from = entries[i]!.headerOffset;
    let to = entries[i]!.dataOffset + entries[i]!.compressedSize;
    for (i++; i < entries.length && entries[i]!.headerOffset === to; i++) to = entries[i]!.dataOffset + entries[i]!.compressedSize;
    await output.write(bytes, from, to - from);
  }
}

/**
 * The entries of a zip from its central directory at `at` (APPNOTE 4.3.12), in file order, with
 * no checks (the floor trusts its input). dataOffset is -1 until the local header is read
 * (dataOffsetOf).
 */
function centralDirectory(bytes: Buffer, at: number): Entry[] {
  const entries: Entry[] = [];
  while (bytes.readUInt32LE(at) === 0x02014b50) {
    const method = bytes.readUInt16LE(at + 10);
    const compressedSize = bytes.readUInt32LE(at + 20);
    const uncompressedSize = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const headerOffset = bytes.readUInt32LE(at + 42);
    const name = bytes.toString('utf8', at + 46, at + 46 + nameLength);
    // Directories too: they are copied (their content, empty, costs nothing to hash).
    entries.push({ name, method, headerOffset, dataOffset: -1, compressedSize, uncompressedSize });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries.sort((a, b) => a.headerOffset - b.headerOffset);
}

/** Where an entry's data starts: after its local header's name and extra field (APPNOTE 4.3.7). */
function dataOffsetOf(bytes: Buffer, entry: Entry): number {
  return entry.headerOffset + 30 + bytes.readUInt16LE(entry.headerOffset + 26) + bytes.readUInt16LE(entry.headerOffset + 28);
}

function centralDirectoryOffset(bytes: Buffer): number {
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 65535); at--) {
    if (bytes.readUInt32LE(at) === 0x06054b50) return bytes.readUInt32LE(at + 16);
  }
  throw new Error('no end of central directory');
}

// Last: the classes above must be initialised before the top-level await runs.
if (!isMainThread) workerLoop();
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kind, file, out, threads] = process.argv.slice(2) as [Kind, string, string, string];
  console.log(JSON.stringify(await runFloor(kind, file, out, Number(threads))));
}
