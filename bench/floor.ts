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
//        of a `zip -1` input) of those the input deflated, in independent 4 MiB pieces (as pigz
//        does) so both cores share a large file; stored ones stay stored, and so do those the
//        input's deflate shrank by less than 0.5 % (random or packed code: the ratio is kept);
//        within the others, a piece whose first 4 KiB do not shrink is written as stored blocks.
//   apk: SHA-256 of every entry's content (v1 manifest) and the v2/v3 chunked content digest
//        (SHA-256 of each 1 MiB chunk of the entries, central directory and EoCD), once: v2 and
//        v3 with the same algorithm share it. Nothing is recompressed (entries are copied raw).
//
// Run as `node bench/floor.ts ios|apk FILE OUT THREADS`: prints one JSON line {ms, cpu, rss}.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

const PAGE = 4096;
const CHUNK = 1024 * 1024;
const PIECE = 256 * 1024;
const SAMPLE = 4 * 1024;
const MAX_STORED = 65535;

type Kind = 'ios' | 'apk';
interface Entry {
  name: string;
  method: number;
  headerOffset: number;
  dataOffset: number;
  compressedSize: number;
  uncompressedSize: number;
}
/** One unit of work: an entry, a piece of rewritten content to deflate, or a run of content-digest chunks. */
type Task = { type: 'entry'; entry: Entry; sealed: boolean } | { type: 'deflate'; piece: Uint8Array; id: number } | { type: 'chunks'; start: number; end: number };

if (!isMainThread) workerLoop();
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kind, file, out, threads] = process.argv.slice(2) as [Kind, string, string, string];
  console.log(JSON.stringify(await runFloor(kind, file, out, Number(threads))));
}

export async function runFloor(kind: Kind, file: string, out: string, threads: number): Promise<{ ms: number; cpu: number; rss: number }> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  // Read: the whole file, once, into memory the workers share.
  const fd = openSync(file, 'r');
  const size = fstatSync(fd).size;
  const shared = new SharedArrayBuffer(size);
  const bytes = Buffer.from(shared);
  for (let at = 0; at < size; ) at += readSync(fd, bytes, at, Math.min(16 * CHUNK, size - at), at);
  closeSync(fd);
  const entries = centralDirectory(bytes);
  const tasks: Task[] = entries.map((entry) => ({ type: 'entry', entry, sealed: kind === 'ios' && entry.name.includes('.framework/') }));
  if (kind === 'apk') {
    // The content digest covers everything up to the central directory, then the directory and EoCD.
    for (let at = 0; at < size; at += 16 * CHUNK) tasks.push({ type: 'chunks', start: at, end: Math.min(size, at + 16 * CHUNK) });
  }
  // Largest first, so the last task to finish is a small one.
  const cost = (t: Task): number => (t.type === 'entry' ? t.entry.compressedSize : t.type === 'chunks' ? t.end - t.start : t.piece.length);
  tasks.sort((a, b) => cost(b) - cost(a));
  const rewritten = new Map<string, Uint8Array[]>();
  if (threads <= 1) {
    const state = worker(kind, bytes);
    for (let task = tasks.shift(); task !== undefined; task = tasks.shift()) {
      const result = state.run(task);
      for (const [name, pieces] of result.rewrites) rewritten.set(name, pieces.map((p) => deflatePiece(p.piece, p.method)));
    }
  } else {
    await parallel(kind, shared, tasks, threads, rewritten);
  }
  // Write: unchanged entries as they were, rewritten ones with their new data, then the directory.
  const output = openSync(out, 'w');
  const cd = entries.length === 0 ? size : centralDirectoryOffset(bytes);
  let position = 0;
  for (const entry of entries) {
    const pieces = rewritten.get(entry.name);
    if (pieces === undefined) continue;
    writeSync(output, bytes, position, entry.dataOffset - position);
    for (const piece of pieces) writeSync(output, piece);
    position = entry.dataOffset + entry.compressedSize;
  }
  writeSync(output, bytes, position, cd - position);
  writeSync(output, bytes, cd, size - cd);
  closeSync(output);
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpu: (cpu.user + cpu.system) / 1000, rss: process.resourceUsage().maxRSS * 1024 };
}

interface Rewrite {
  piece: Uint8Array;
  method: number;
}

/** The per-thread work: one reusable state, buffers owned by zlib and the hashes. */
function worker(kind: Kind, bytes: Buffer): { run: (task: Task) => { rewrites: Map<string, Rewrite[]> } } {
  const run = (task: Task): { rewrites: Map<string, Rewrite[]> } => {
    const rewrites = new Map<string, Rewrite[]>();
    if (task.type === 'chunks') {
      for (let at = task.start; at < task.end; at += CHUNK) createHash('sha256').update(bytes.subarray(at, Math.min(task.end, at + CHUNK))).digest();
      return { rewrites };
    }
    if (task.type === 'deflate') return { rewrites };
    const { entry } = task;
    const raw = bytes.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
    const content = entry.method === 0 ? raw : inflateRawSync(raw);
    if (kind === 'apk') {
      createHash('sha256').update(content).digest();
      return { rewrites };
    }
    const magic = content.length >= 4 ? content.readUInt32BE(0) : 0;
    const machO = magic === 0xcffaedfe || magic === 0xcefaedfe || magic === 0xcafebabe || magic === 0xfeedfacf;
    if (!machO) {
      createHash('sha1').update(content).digest();
      createHash('sha256').update(content).digest();
      return { rewrites };
    }
    for (let at = 0; at < content.length; at += PAGE) createHash('sha256').update(content.subarray(at, at + PAGE)).digest();
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
    rewrites.set(entry.name, pieces);
    return { rewrites };
  };
  return { run };
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

async function parallel(kind: Kind, shared: SharedArrayBuffer, tasks: Task[], threads: number, rewritten: Map<string, Uint8Array[]>): Promise<void> {
  const count = Math.min(threads, availableParallelism());
  const workers = Array.from({ length: count }, () => new Worker(fileURLToPath(import.meta.url), { workerData: { kind, shared } }));
  let nextId = 0;
  const slots = new Map<number, { name: string; index: number }>();
  const queue = [...tasks];
  await new Promise<void>((resolve, reject) => {
    const idle = new Set<Worker>(workers);
    const dispatch = (): void => {
      for (const w of [...idle]) {
        const task = queue.shift();
        if (task === undefined) break;
        idle.delete(w);
        w.postMessage(task, task.type === 'deflate' ? [task.piece.buffer as ArrayBuffer] : []);
      }
      if (queue.length === 0 && idle.size === workers.length) resolve();
    };
    for (const w of workers) {
      w.on('error', reject);
      w.on('message', (message: { rewrites?: Array<[string, Rewrite[]]>; deflated?: { id: number; piece: Uint8Array } }) => {
        idle.add(w);
        for (const [name, pieces] of message.rewrites ?? []) {
          const out: Uint8Array[] = new Array(pieces.length);
          rewritten.set(name, out);
          pieces.forEach((p, index) => {
            if (p.method === 0) out[index] = p.piece;
            else {
              const id = nextId++;
              slots.set(id, { name, index });
              // Pieces go to the front of the queue: they are the large work left.
              queue.unshift({ type: 'deflate', piece: p.piece, id });
            }
          });
        }
        if (message.deflated !== undefined) {
          const slot = slots.get(message.deflated.id)!;
          rewritten.get(slot.name)![slot.index] = message.deflated.piece;
        }
        dispatch();
      });
    }
    dispatch();
  });
  await Promise.all(workers.map((w) => w.terminate()));
}

function workerLoop(): void {
  const { kind, shared } = workerData as { kind: Kind; shared: SharedArrayBuffer };
  const state = worker(kind, Buffer.from(shared));
  parentPort!.on('message', (task: Task) => {
    if (task.type === 'deflate') {
      const piece = deflatePiece(Buffer.from(task.piece.buffer, task.piece.byteOffset, task.piece.byteLength), 8);
      parentPort!.postMessage({ deflated: { id: task.id, piece } });
      return;
    }
    const { rewrites } = state.run(task);
    // Content pieces are copied out of zlib's buffer once, to be deflated by whichever thread is free.
    const list = [...rewrites].map(([name, pieces]) => [name, pieces.map((p) => ({ method: p.method, piece: p.method === 0 ? p.piece : new Uint8Array(p.piece) }))] as [string, Rewrite[]]);
    parentPort!.postMessage({ rewrites: list });
  });
}

/** The entries of a zip from its central directory (APPNOTE 4.3.12), with no checks: the floor trusts its input. */
function centralDirectory(bytes: Buffer): Entry[] {
  const entries: Entry[] = [];
  let at = centralDirectoryOffset(bytes);
  while (bytes.readUInt32LE(at) === 0x02014b50) {
    const method = bytes.readUInt16LE(at + 10);
    const compressedSize = bytes.readUInt32LE(at + 20);
    const uncompressedSize = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const headerOffset = bytes.readUInt32LE(at + 42);
    const name = bytes.toString('utf8', at + 46, at + 46 + nameLength);
    const dataOffset = headerOffset + 30 + bytes.readUInt16LE(headerOffset + 26) + bytes.readUInt16LE(headerOffset + 28);
    if (!name.endsWith('/')) entries.push({ name, method, headerOffset, dataOffset, compressedSize, uncompressedSize });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries.sort((a, b) => a.headerOffset - b.headerOffset);
}

function centralDirectoryOffset(bytes: Buffer): number {
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 65535); at--) {
    if (bytes.readUInt32LE(at) === 0x06054b50) return bytes.readUInt32LE(at + 16);
  }
  throw new Error('no end of central directory');
}
