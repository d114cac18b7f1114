// Worker-thread entry of the re-signer's background hashing (scan-thread.ts): opens the input
// file itself, hashes the entries it was given in order, exactly as the in-process scan does
// (scan.ts hashEntry: checked inflation, then SHA-1 and SHA-256), and posts their records back
// in batches; the first failure is posted with its error code and ends the work.
import { parentPort, workerData } from 'node:worker_threads';
import { FileSource, SIGNING_READS } from '../../data-source.ts';
import { SigningError, type SigningErrorCode } from '../../errors.ts';
import { droppedBuffers } from '../../reclaim.ts';
import type { EntryLocation } from '../../zip/entry-content.ts';
import type { ZipLimits } from '../../zip/index.ts';
import { ReadAheadSource } from './read-ahead.ts';
import { hashEntry } from './scan.ts';

/** What the thread is given. */
export interface ScanWork {
  path: string;
  limits: ZipLimits;
  entries: EntryLocation[];
}

/** What the thread posts: records in batches, then `done`; or the first failure. */
export type ScanMessage =
  | { kind: 'records'; records: Array<[name: string, sha1: Uint8Array, sha256: Uint8Array]> }
  | { kind: 'failed'; name: string; code: SigningErrorCode | undefined; message: string; details: Record<string, unknown> | undefined }
  | { kind: 'done' };

// Small enough that a leaf bundle's files come back soon after they are hashed, large enough that
// posting is not a cost (bench:ipa: 2,000 resources, ~60 batches).
const BATCH = 32;
// The in-process scan's window (scan.ts SCAN_WINDOW): one read serves a run of small entries.
const WINDOW = 256 * 1024;

const { path, limits, entries } = workerData as ScanWork;
const port = parentPort!;
const post = (message: ScanMessage): void => port.postMessage(message);
const source = await FileSource.open(path, SIGNING_READS);
try {
  const window = new ReadAheadSource(source, WINDOW);
  let batch: Extract<ScanMessage, { kind: 'records' }>['records'] = [];
  let failed = false;
  for (const entry of entries) {
    let record;
    try {
      record = await hashEntry(window, entry, limits, false);
    } catch (error) {
      const signing = error instanceof SigningError ? error : undefined;
      post({ kind: 'records', records: batch });
      post({ kind: 'failed', name: entry.name, code: signing?.code, message: (error as Error).message, details: signing?.details });
      failed = true;
      break;
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
  if (!failed) {
    post({ kind: 'records', records: batch });
    post({ kind: 'done' });
  }
} finally {
  await source.close();
}
