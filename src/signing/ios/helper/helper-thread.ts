// The iOS pipeline's second JavaScript thread (helper-worker.ts), started on first use and kept
// until closed, so that one start-up (~30 ms of CPU, more where V8 flags keep Node's code cache
// out) serves two jobs:
//   - the re-signer's background hashing of the app's resources (SHA-1 and SHA-256 of every
//     byte, after inflating it): on the main thread it would share one core with the copy, the
//     signing and the writes; here it runs on the second core beside them, with its own handle
//     on the input file. Records come back in batches, in the order given, so leaf bundles are
//     sealed early; symlinks (a few bytes each) are read on the calling thread;
//   - reading the signed Mach-O files back from the output for the verifier as soon as each is
//     written (../verify-ipa/read-back.ts): inflated, checked and hashed here while the main
//     thread goes on.
// Jobs run one after another, in the order given. Files are opened by path: the input and the
// output must be files.
import { Worker } from 'node:worker_threads';
import { SigningError } from '../../errors.ts';
import type { EntryLocation } from '../../zip/entry-content.ts';
import type { ZipEntry, ZipLimits, ZipReader } from '../../zip/index.ts';
import { readSymlink, ScanProgress, type BackgroundScan, type FileRecord } from '../resign/scan.ts';
import type { StreamedCode } from '../verify-ipa/stream-code.ts';
import type { HelperJob, HelperMessage, HelperRequest, StreamedCodeData } from './helper-worker.ts';

interface Pending {
  message(message: HelperMessage): void;
  /** The thread stopped (closed, crashed) before the job was done. */
  lost(error: unknown): void;
}

export class HelperThread {
  #worker: Worker | undefined;
  #stopped: unknown;
  #next = 0;
  readonly #pending = new Map<number, Pending>();

  /** Whether the thread is running (started by a job, not closed). */
  get started(): boolean {
    return this.#worker !== undefined && this.#stopped === undefined;
  }

  /** Hashes `entries` of the file at `path`, in order, into `records`, as startScan does in-process. */
  scan(path: string, zip: ZipReader, entries: readonly ZipEntry[], records: Map<string, FileRecord>, signal?: AbortSignal): BackgroundScan {
    const progress = new ScanProgress(entries, records);
    // Each location is what readContentChunks needs; the entries the re-signer hashes are all readable.
    const locations = entries.filter((e) => !e.isSymlink).map(locationOf);
    // On abort the thread is stopped at once: the scan settles only when it has, so that nothing
    // reads the input once the caller has moved on.
    const stop = (): void => void this.close();
    signal?.addEventListener('abort', stop, { once: true });
    const hashed = new Promise<void>((resolve, reject) => {
      this.#post({ kind: 'scan', path, limits: zip.limits, entries: locations }, {
        message: (message) => {
          if (message.kind === 'records') {
            for (const [name, sha1, sha256] of message.records) progress.settle(name, { kind: 'file', sha1: Buffer.from(sha1), sha256: Buffer.from(sha256) });
          } else if (message.kind === 'failed') {
            const error = errorOf(message);
            if (message.name !== undefined) progress.fail(message.name, error);
            reject(error);
          } else if (message.kind === 'done') resolve();
        },
        lost: (error) => reject(signal?.aborted === true ? signal.reason : error),
      });
    }).finally(() => signal?.removeEventListener('abort', stop));
    hashed.catch(() => {}); // surfaced through `done`
    if (signal?.aborted === true) stop();
    const links = (async () => {
      for (const entry of entries) {
        if (!entry.isSymlink) continue;
        signal?.throwIfAborted();
        try {
          progress.settle(entry.name, { kind: 'symlink', target: await readSymlink(zip, entry) });
        } catch (error) {
          progress.fail(entry.name, error);
          throw error;
        }
      }
    })();
    links.catch(stop); // the thread's work is of no use any more
    // An abort before the scan is seen to be done fails it, as it fails the in-process scan.
    return progress.scan(Promise.all([hashed, links]).then(() => signal?.throwIfAborted()));
  }

  /** streamCode (../verify-ipa/stream-code.ts) of the entry at `entry` in the zip file at `path`, on the thread. */
  streamCode(path: string, limits: ZipLimits, entry: EntryLocation, wholeFile: boolean): Promise<StreamedCode | undefined> {
    return new Promise((resolve, reject) => {
      this.#post({ kind: 'stream', path, limits, entry: plainLocation(entry), wholeFile }, {
        message: (message) => {
          if (message.kind === 'streamed') resolve(message.code === null ? undefined : streamedCodeOf(message.code));
          else if (message.kind === 'failed') reject(errorOf(message));
        },
        lost: reject,
      });
    });
  }

  /** Stops the thread (what it was doing is lost: pending jobs fail). Idempotent. */
  async close(): Promise<void> {
    this.#stopped ??= new Error('the helper thread was closed');
    await this.#worker?.terminate();
  }

  #post(request: HelperRequest, pending: Pending): void {
    if (this.#stopped !== undefined) return pending.lost(this.#stopped);
    const id = this.#next++;
    this.#pending.set(id, {
      message: (message) => {
        if (message.kind !== 'records') this.#pending.delete(id);
        pending.message(message);
      },
      lost: pending.lost,
    });
    const job: HelperJob = { ...request, id };
    this.#start().postMessage(job);
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(new URL('./helper-worker.ts', import.meta.url));
    worker.on('message', (message: HelperMessage) => this.#pending.get(message.id)?.message(message));
    worker.on('error', (error) => (this.#stopped ??= error));
    worker.on('exit', (code) => {
      this.#stopped ??= new Error(`the helper thread exited with code ${code}`);
      for (const pending of this.#pending.values()) pending.lost(this.#stopped);
      this.#pending.clear();
    });
    this.#worker = worker;
    return worker;
  }
}

function locationOf(entry: ZipEntry): EntryLocation {
  if (entry.unreadable !== null) throw entry.unreadable;
  return plainLocation(entry);
}

/** Only the fields a location has (a ZipEntry carries buffers and more that need not cross). */
function plainLocation(entry: EntryLocation): EntryLocation {
  const { name, method, crc32, compressedSize, uncompressedSize, dataOffset } = entry;
  return { name, method, crc32, compressedSize, uncompressedSize, dataOffset, unreadable: null };
}

function errorOf(message: Extract<HelperMessage, { kind: 'failed' }>): Error {
  return message.code === undefined ? new Error(message.message) : new SigningError(message.code, message.message, message.details === undefined ? {} : { details: message.details });
}

/** Structured clone turns Buffers into Uint8Arrays: views again. */
function streamedCodeOf(data: StreamedCodeData): StreamedCode {
  const buf = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  return {
    size: data.size,
    head: buf(data.head),
    signature: buf(data.signature),
    codeLimit: data.codeLimit,
    pageHashes: data.pageHashes.map(({ type, hashes }) => ({ type, hashes: buf(hashes) })),
    record: data.record === undefined ? undefined : { kind: 'file', sha1: buf(data.record.sha1), sha256: buf(data.record.sha256) },
  };
}
