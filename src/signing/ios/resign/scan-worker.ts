// Worker-thread entry of the re-signer's background hashing (scan-thread.ts): opens the input
// file itself, hashes the entries it was given in order, exactly as the in-process scan does
// (scan.ts hashEntry: checked inflation, then SHA-1 and SHA-256), and posts their records back
// in batches; the first failure is posted with its error code and ends the work. The input is
// closed before `done` is posted: nothing reads it after that.
//
// With `readBack` (the output file's path), the thread then reads signed Mach-O files back from
// the output as the re-signer asks (read-back.ts): each streams past once (stream-code.ts, the
// verifier's own reading), and what the verifier needs of it is posted back. Requests that come
// while it still hashes wait for the hashing, which the bundles' seals wait on.
import { parentPort, workerData } from 'node:worker_threads';
import { FileSource, SIGNING_READS } from '../../data-source.ts';
import { SigningError, type SigningErrorCode } from '../../errors.ts';
import { droppedBuffers, droppedYoungBuffers } from '../../reclaim.ts';
import type { EntryLocation } from '../../zip/entry-content.ts';
import type { ZipLimits } from '../../zip/index.ts';
import { ReadAheadSource } from './read-ahead.ts';
import { hashEntry } from './scan.ts';
import { streamCode, type StreamedCode } from './stream-code.ts';

/** What the thread is given. */
export interface ScanWork {
  path: string;
  limits: ZipLimits;
  entries: EntryLocation[];
  /** The output file, when the thread is to read written code back from it. */
  readBack?: string;
}

/** What the thread posts: records in batches, then `done`; or the first failure. Then read-backs, in the order asked. */
export type ScanMessage =
  | { kind: 'records'; records: Array<[name: string, sha1: Uint8Array, sha256: Uint8Array]> }
  | { kind: 'failed'; name: string; code: SigningErrorCode | undefined; message: string; details: Record<string, unknown> | undefined }
  | { kind: 'done' }
  | { kind: 'readBack'; name: string; code: StreamedCode | null };

/** What the thread is asked once started: read an entry of the output back (`wholeFile`: take its digests too), or stop. */
export type ReadBackRequest = { kind: 'readBack'; location: EntryLocation; wholeFile: boolean } | { kind: 'close' };

// Small enough that a leaf bundle's files come back soon after they are hashed, large enough that
// posting is not a cost (bench:ipa: 2,000 resources, ~60 batches).
const BATCH = 32;
// The in-process scan's window (scan.ts SCAN_WINDOW): one read serves a run of small entries.
const WINDOW = 256 * 1024;
// Read-backs run beside the main thread's work, so their buffers add to its peak: with the
// verifier's 1 MiB chunks, bench:ipa's code app peaked ~9 MiB higher (220 against 212 MiB, 5
// alternating pairs), at no gain in time (the trips to libuv's pool are this thread's to wait for).
const READ_BACK_CHUNK = 256 * 1024;

const { path, limits, entries, readBack } = workerData as ScanWork;
const port = parentPort!;
const post = (message: ScanMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

// Listening from the start: requests may come while the thread still hashes.
const requests: ReadBackRequest[] = [];
let wake: (() => void) | undefined;
const listener = (request: ReadBackRequest): void => {
  requests.push(request);
  wake?.();
};
if (readBack !== undefined) port.on('message', listener);
try {
  if (await hashAll()) await readBackAll(readBack);
} finally {
  // Without a listener the thread exits once its work is done.
  port.off('message', listener);
}

/** True once every entry is hashed and `done` posted; false after a failure. */
async function hashAll(): Promise<boolean> {
  const source = await FileSource.open(path, SIGNING_READS);
  let batch: Extract<ScanMessage, { kind: 'records' }>['records'] = [];
  try {
    const window = new ReadAheadSource(source, WINDOW);
    for (const entry of entries) {
      let record;
      try {
        record = await hashEntry(window, entry, limits, false);
      } catch (error) {
        const signing = error instanceof SigningError ? error : undefined;
        post({ kind: 'records', records: batch });
        post({ kind: 'failed', name: entry.name, code: signing?.code, message: (error as Error).message, details: signing?.details });
        return false;
      }
      if (record === 'macho') throw new Error('internal: the background scan does not sniff');
      // The entry's inflated bytes are garbage now: collected early rather than piling up as
      // external memory until V8's 64 MB limit (reclaim.ts; on bench:ipa ~20 MB of peak RSS).
      droppedBuffers(entry.uncompressedSize);
      batch.push([entry.name, record.sha1, record.sha256]);
      if (batch.length === BATCH) {
        post({ kind: 'records', records: batch });
        batch = [];
      }
    }
  } finally {
    await source.close();
  }
  post({ kind: 'records', records: batch });
  post({ kind: 'done' });
  return true;
}

async function readBackAll(output: string | undefined): Promise<void> {
  if (output === undefined) return;
  let source: FileSource | undefined;
  try {
    for (;;) {
      if (requests.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const request = requests.shift()!;
      if (request.kind === 'close') return;
      const { location } = request;
      let code: StreamedCode | undefined;
      try {
        // The output grows while it is read: a source knows the size it had when opened.
        if (source === undefined || location.dataOffset + location.compressedSize > source.size) {
          await source?.close();
          source = undefined;
          source = await FileSource.open(output, SIGNING_READS);
        }
        // Little else allocates here, so nothing would collect the inflated chunks before V8's
        // 64 MB external-memory limit: an 80 MiB executable read back cost ~80 MB of peak RSS.
        // Unlike the hashing's zlib streams (one per resource), they die young (reclaim.ts).
        code = await streamCode(source, location, limits, { wholeFile: request.wholeFile, chunk: READ_BACK_CHUNK, dropped: droppedYoungBuffers });
      } catch {
        // The verifier reads the file itself and reports why it fails, in its usual terms.
        code = undefined;
      }
      post({ kind: 'readBack', name: location.name, code: code ?? null }, code === undefined ? [] : ownedBuffers(code));
    }
  } finally {
    await source?.close();
  }
}

/** The arrays posted: moved to the other thread, not copied. */
function ownedBuffers(code: StreamedCode): ArrayBuffer[] {
  const arrays = [code.head, code.signature, ...code.pageHashes.map(([, hashes]) => hashes), ...(code.digests === undefined ? [] : [code.digests.sha1, code.digests.sha256])];
  return arrays.map((array) => array.buffer as ArrayBuffer);
}
