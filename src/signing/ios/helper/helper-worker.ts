// Worker-thread entry of the helper thread (helper-thread.ts). Jobs run one after another, each
// opening its file itself:
//   scan   - hashes the entries it was given in order, exactly as the in-process scan does
//            (resign/scan.ts hashEntry: checked inflation, then SHA-1 and SHA-256), and posts
//            their records back in batches; the first failure is posted with its error code and
//            ends the job. `done` is posted once the file is closed.
//   stream - streamCode (verify-ipa/stream-code.ts) of one entry.
import { parentPort } from 'node:worker_threads';
import { FileSource, SIGNING_READS } from '../../data-source.ts';
import { SigningError, type SigningErrorCode } from '../../errors.ts';
import { droppedBuffers } from '../../reclaim.ts';
import type { EntryLocation } from '../../zip/entry-content.ts';
import type { ZipLimits } from '../../zip/index.ts';
import type { HashName } from '../codesign/index.ts';
import { ReadAheadSource } from '../resign/read-ahead.ts';
import { hashEntry } from '../resign/scan.ts';
import { streamCode } from '../verify-ipa/stream-code.ts';

/** What the thread is asked to do. */
export type HelperRequest =
  | { kind: 'scan'; path: string; limits: ZipLimits; entries: EntryLocation[] }
  | { kind: 'stream'; path: string; limits: ZipLimits; entry: EntryLocation; wholeFile: boolean };

/** A request as posted: numbered, so that the replies can name it. */
export type HelperJob = HelperRequest & { id: number };

/** StreamedCode as it crosses the thread boundary (Buffers arrive as Uint8Arrays). */
export interface StreamedCodeData {
  size: number;
  head: Uint8Array;
  signature: Uint8Array;
  codeLimit: number;
  pageHashes: Array<{ type: HashName; hashes: Uint8Array }>;
  record: { sha1: Uint8Array; sha256: Uint8Array } | undefined;
}

/** What the thread posts about job `id`: records in batches, then `done`; a stream's result; or its failure. */
export type HelperMessage =
  | { id: number; kind: 'records'; records: Array<[name: string, sha1: Uint8Array, sha256: Uint8Array]> }
  | { id: number; kind: 'done' }
  | { id: number; kind: 'streamed'; code: StreamedCodeData | null }
  | { id: number; kind: 'failed'; name: string | undefined; code: SigningErrorCode | undefined; message: string; details: Record<string, unknown> | undefined };

// Small enough that a leaf bundle's files come back soon after they are hashed, large enough that
// posting is not a cost (bench:ipa: 2,000 resources, ~60 batches).
const BATCH = 32;
// The in-process scan's window (scan.ts SCAN_WINDOW): one read serves a run of small entries.
const WINDOW = 256 * 1024;

const port = parentPort!;
const post = (message: HelperMessage): void => port.postMessage(message);

let queue = Promise.resolve();
port.on('message', (job: HelperJob) => {
  queue = queue.then(() => run(job));
});

async function run(job: HelperJob): Promise<void> {
  const source = await FileSource.open(job.path, SIGNING_READS).catch((error: unknown) => void post(failure(job.id, undefined, error)));
  if (source === undefined) return;
  let result: HelperMessage[] | undefined;
  try {
    result = job.kind === 'scan' ? await scan(job, source) : [await stream(job, source)];
  } catch (error) {
    result = [failure(job.id, undefined, error)];
  } finally {
    await source.close();
  }
  // Posted once the file is closed: the caller may then remove it.
  for (const message of result) post(message);
}

/** Posts the records as they come; returns what ends the job (`done`, or the first failure). */
async function scan(job: Extract<HelperJob, { kind: 'scan' }>, source: FileSource): Promise<HelperMessage[]> {
  const window = new ReadAheadSource(source, WINDOW);
  let batch: Array<[string, Uint8Array, Uint8Array]> = [];
  for (const entry of job.entries) {
    let record;
    try {
      record = await hashEntry(window, entry, job.limits, false);
    } catch (error) {
      return [{ id: job.id, kind: 'records', records: batch }, failure(job.id, entry.name, error)];
    }
    if (record === 'macho') throw new Error('internal: the background scan does not sniff');
    // The entry's inflated bytes are garbage now: collected early rather than piling up as
    // external memory until V8's 64 MB limit (reclaim.ts; on bench:ipa ~20 MB of peak RSS).
    droppedBuffers(entry.uncompressedSize);
    batch.push([entry.name, record.sha1, record.sha256]);
    if (batch.length === BATCH) {
      post({ id: job.id, kind: 'records', records: batch });
      batch = [];
    }
  }
  return [{ id: job.id, kind: 'records', records: batch }, { id: job.id, kind: 'done' }];
}

async function stream(job: Extract<HelperJob, { kind: 'stream' }>, source: FileSource): Promise<HelperMessage> {
  const code = await streamCode(source, job.limits, job.entry, job.wholeFile);
  // Its reads, inflated chunks and stand-in are garbage now (see scan above).
  droppedBuffers(job.entry.compressedSize + job.entry.uncompressedSize);
  if (code === undefined) return { id: job.id, kind: 'streamed', code: null };
  const { size, head, signature, codeLimit, pageHashes, record } = code;
  // Copies of their own: a view would carry its whole buffer (the file's size) across.
  const own = (view: Uint8Array): Uint8Array => Uint8Array.prototype.slice.call(view);
  return {
    id: job.id,
    kind: 'streamed',
    code: { size, head: own(head), signature: own(signature), codeLimit, pageHashes, record: record === undefined ? undefined : { sha1: record.sha1, sha256: record.sha256 } },
  };
}

function failure(id: number, name: string | undefined, error: unknown): HelperMessage {
  const signing = error instanceof SigningError ? error : undefined;
  return { id, kind: 'failed', name, code: signing?.code, message: (error as Error).message, details: signing?.details };
}
