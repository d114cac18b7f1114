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
//        within the others, a piece whose first or middle 4 KiB do not shrink is written as
//        stored blocks.
//   apk: SHA-256 of every entry's content (v1 manifest) and the v2/v3 chunked content digest
//        (SHA-256 of each 1 MiB chunk of the entries, central directory and EoCD), once: v2 and
//        v3 with the same algorithm share it. Nothing is recompressed (entries are copied raw).
//
// Output: each entry as soon as it is done (copied raw when unchanged, as a signer may do while it
// computes; header and new data when rewritten), then the central directory.
//
// Memory: the file goes through a few reused slabs (SLAB bytes each, or one entry's size when an
// entry is larger) rather than into one buffer of its size; an iOS file from Signet's streaming
// size on (an 80 MiB executable) is streamed instead, never held whole (floor-stream.ts). Touching fresh memory costs a page
// fault per 4 KiB; on a VM measured at ~20 µs per fault, reading bench:apk's 191 MiB APK into one
// buffer of its size made this floor 2.0-2.3 s on one core, slower than `signet sign` (which
// streams) - a floor that hid the gap it is there to show.
//
// On two cores (THREADS 2): two workers share the slabs (SharedArrayBuffer). The main thread
// reads the central directory, then the file front to back into free slabs, each ending after a
// whole entry, and hands each slab's entries to the workers (in batches, BATCH: one message per
// small entry left the workers idle for a round trip each), while libuv's pool writes the
// entries a worker found unchanged (the worker's inflation is the only look at their content).
// A slab is reused once its tasks are done and its bytes written. A rewritten file found in a
// slab is deflated by the worker that inflated it (floor-work.ts serveWorker); a streamed one's
// pieces go to either worker through reused shared memory (floor-stream.ts). A content-digest
// chunk that spans two slabs is put together and hashed by the main thread. A streamed file's
// page hashes and CRC-32 are taken by the main thread as it reads: sharing them between the
// workers piece by piece (per-piece CRC-32s combine as in zlib's crc32_combine) was tried and
// measured, with no change beyond the noise on either scale-1 app.
//
// Run as `node bench/floor.ts ios|apk FILE OUT THREADS`: prints one JSON line {ms, cpu, rss}. The
// reading is in floor-slabs.ts, the work on the bytes in floor-work.ts, large iOS files in
// floor-stream.ts, the two-core dispatch in floor-dispatcher.ts.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isMainThread, Worker } from 'node:worker_threads';
import { Dispatcher } from './floor-dispatcher.ts';
import { centralDirectory, centralDirectoryOffset, CHUNK, ChunkPlan, readBytes, SlabPool, SlabReader, type Entry, type Slab } from './floor-slabs.ts';
import { STREAM_ABOVE, streamEntry } from './floor-stream.ts';
import { deflatePiece, isSealed, PIECE, runTask, serveWorker, tasksFor, writeUnchanged, type Kind } from './floor-work.ts';

// Slabs in use at once on two cores: one being read while the workers have the others.
const SLABS_ON_WORKERS = 4;
// A streamed entry's pieces in flight on two cores: a batch (BATCH in floor-dispatcher.ts) for
// each worker while the next are filled.
const PIECES_ON_WORKERS = 12;

/** iOS files from Signet's streaming size on are streamed (floor-stream.ts); APK entries are read into slabs. */
function streamAbove(kind: Kind): number {
  return kind === 'ios' ? STREAM_ABOVE : Infinity;
}

export async function runFloor(kind: Kind, file: string, out: string, threads: number): Promise<{ ms: number; cpu: number; rss: number }> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const fd = openSync(file, 'r');
  const size = fstatSync(fd).size;
  // The end first (the central directory lists the entries), then front to back.
  const tailStart = Math.max(0, size - 22 - 65535);
  const tail = readBytes(fd, tailStart, size);
  const cdOffset = centralDirectoryOffset(tail);
  const directory = cdOffset >= tailStart ? tail.subarray(cdOffset - tailStart) : Buffer.concat([readBytes(fd, cdOffset, tailStart), tail]);
  const entries = centralDirectory(directory);
  const chunks = kind === 'apk' ? new ChunkPlan() : null;
  const output = threads <= 1 ? await onOneCore(kind, fd, entries, cdOffset, out, chunks) : await onWorkers(kind, fd, entries, cdOffset, out, threads, chunks);
  closeSync(fd);
  // The content digest ends with the central directory and EoCD, in chunks of their own.
  if (chunks !== null) {
    chunks.finish();
    for (let at = 0; at < directory.length; at += CHUNK) createHash('sha256').update(directory.subarray(at, at + CHUNK)).digest();
  }
  await output.write(directory);
  await output.close();
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpu: (cpu.user + cpu.system) / 1000, rss: process.resourceUsage().maxRSS * 1024 };
}

/** Reads the file slab by slab and, for each, computes and writes its entries, one after the other. */
async function onOneCore(kind: Kind, fd: number, entries: Entry[], cdOffset: number, out: string, chunks: ChunkPlan | null): Promise<Output> {
  // Synchronous writes: one core.
  const outFd = openSync(out, 'w');
  const output: Output = { write: async (data, offset = 0, length = data.length - offset) => void writeSync(outFd, data, offset, length), close: async () => closeSync(outFd) };
  const slabs = new SlabPool(1);
  const reader = new SlabReader(fd, entries, cdOffset, streamAbove(kind));
  // A large entry's pieces are deflated in place, one at a time, and written at once.
  // A large entry is read and inflated one step at a time (no read-ahead: one core at a time).
  const stream = { pieces: [Buffer.allocUnsafe(PIECE)], compress: deflatePiece, write: (data: Uint8Array) => void writeSync(outFd, data), readAhead: false };
  while (!reader.done) {
    const large = reader.streamNext();
    if (large !== null) {
      await streamEntry(fd, large, isSealed(large), stream);
      reader.streamed(large);
      continue;
    }
    const { slab, ready } = reader.next(slabs.acquireNow(reader.need()));
    const unchanged: Entry[] = [];
    for (const task of tasksFor(kind, slab, ready, chunks)) {
      const pieces = runTask(kind, slab.bytes, task);
      if (task.type !== 'entry') continue;
      if (pieces === null) unchanged.push(task.entry);
      else {
        writeSync(outFd, slab.bytes, task.entry.headerOffset - slab.start, task.entry.dataOffset - task.entry.headerOffset);
        for (const p of pieces) writeSync(outFd, deflatePiece(p.piece, p.method));
      }
    }
    writeUnchanged((data, offset, length) => void writeSync(outFd, data, offset, length), slab, unchanged);
    slabs.release(slab);
  }
  return output;
}

/**
 * Reads the file front to back into free slabs; each slab's entries go to the workers as soon as
 * its bytes are in and, once a worker found them unchanged, to the output (written on libuv's pool
 * while the workers compute).
 */
async function onWorkers(kind: Kind, fd: number, entries: Entry[], cdOffset: number, out: string, threads: number, chunks: ChunkPlan | null): Promise<Output> {
  const handle = await open(out, 'w');
  const output: Output = { write: async (data, offset, length) => void (await handle.write(data, offset, length)), close: () => handle.close() };
  const slabs = new SlabPool(SLABS_ON_WORKERS);
  const inUse = new Map<number, Slab>();
  // Writes go out one after the other, in the order the work finishes.
  let written = Promise.resolve();
  const write = (data: Uint8Array, offset?: number, length?: number): void => void (written = written.then(() => output.write(data, offset, length)));
  const workers = Array.from({ length: Math.min(threads, availableParallelism()) }, () => new Worker(fileURLToPath(import.meta.url), { workerData: { kind } }));
  const pool = new Dispatcher(workers, inUse, {
    unchanged: (slab, done) => writeUnchanged(write, slab, done),
    rewritten: (header, pieces) => {
      write(header);
      for (const piece of pieces) write(piece);
    },
    slabDone: (slab) => {
      // Its bytes are reused once the writes that read them (all queued by now) are done.
      written = written.then(() => {
        inUse.delete(slab.id);
        slabs.release(slab);
      });
    },
  });
  const reader = new SlabReader(fd, entries, cdOffset, streamAbove(kind));
  // A large entry's pieces go to the workers through shared memory, a few at a time.
  const stream = {
    pieces: Array.from({ length: PIECES_ON_WORKERS }, () => Buffer.from(new SharedArrayBuffer(PIECE))),
    compress: (piece: Buffer, method: number) => (method === 0 ? piece : pool.deflate(piece)),
    write: (data: Uint8Array) => output.write(data),
    readAhead: true,
  };
  while (!reader.done) {
    const large = reader.streamNext();
    if (large !== null) {
      // Its bytes stay together: everything before it is written first.
      await pool.drained();
      await written;
      await streamEntry(fd, large, isSealed(large), stream);
      reader.streamed(large);
      continue;
    }
    const read = reader.next(await slabs.acquire(reader.need()));
    inUse.set(read.slab.id, read.slab);
    pool.add(read.slab, tasksFor(kind, read.slab, read.ready, chunks));
    // Lets the workers' results in, so that they are given more work.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await pool.finish();
  await written;
  return output;
}

/** Sequential writes to the output file. */
interface Output {
  write(data: Uint8Array, offset?: number, length?: number): Promise<void>;
  close(): Promise<void>;
}

if (!isMainThread) serveWorker();
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kind, file, out, threads] = process.argv.slice(2) as [Kind, string, string, string];
  console.log(JSON.stringify(await runFloor(kind, file, out, Number(threads))));
}
