// The re-signer's background hashing on a thread of its own. Hashing an app's resources (SHA-1
// and SHA-256 of every byte, after inflating it) is the largest share of the signing pass after
// the code, and on the main thread it shares one core with the copy, the signing and the writes:
// bench:ipa's 2,000 resources finished hashing ~1 s into the pass, and every bundle's seal waits
// for its resources. On a thread of its own, with its own handle on the input file, it runs on
// the second core beside them (scan-worker.ts; ~30 ms of CPU to start). Records come back in
// batches, in the order given, so leaf bundles are sealed early as before; symlinks (a few bytes
// each) are read here. The input must be a file, so the thread can open it (FileSource.path).
//
// Given the output file's path, the thread stays on once it has hashed, to read signed code back
// from the output for the verification (read-back.ts): by then it is warm and the second core is
// free, while this thread is still signing.
import { Worker } from 'node:worker_threads';
import { SigningError } from '../../errors.ts';
import { locationOf, type EntryLocation } from '../../zip/entry-content.ts';
import type { ZipEntry, ZipReader } from '../../zip/index.ts';
import { readSymlink, ScanProgress, type BackgroundScan, type FileRecord } from './scan.ts';
import type { ReadBackRequest, ScanMessage, ScanWork } from './scan-worker.ts';
import type { StreamedCode } from './stream-code.ts';

/** The thread's reading of written code, once it has hashed (scan-worker.ts). */
export interface CodeReadBack {
  /** Streams the entry at `location` of the output past once; undefined when the thread could not (the verifier then reads it). */
  request(location: EntryLocation, wholeFile: boolean): Promise<StreamedCode | undefined>;
  /** No more requests: the thread ends once it has answered those made. */
  close(): void;
}

export interface ScanThread extends BackgroundScan {
  /** With an output path: the thread's reading of written code. */
  readBack: CodeReadBack | undefined;
}

/**
 * Hashes `entries` of the file at `path` on a worker thread, as startScan does in-process; with
 * `output` (the output file's path), then reads code back from it as asked.
 */
export function startScanThread(path: string, zip: ZipReader, entries: readonly ZipEntry[], records: Map<string, FileRecord>, signal?: AbortSignal, output?: string): ScanThread {
  const progress = new ScanProgress(entries, records);
  // Each location is what readContentChunks needs; the entries the re-signer hashes are all readable.
  const work: ScanWork = { path, limits: zip.limits, entries: entries.filter((e) => !e.isSymlink).map(location), ...(output === undefined ? {} : { readBack: output }) };
  const worker = new Worker(new URL('./scan-worker.ts', import.meta.url), { workerData: work });
  // Read-backs asked for and not yet answered, by entry name (names are unique in an archive).
  const answers = new Map<string, (code: StreamedCode | undefined) => void>();
  const stop = (): void => void worker.terminate();
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted === true) stop();
  // Settles once the thread has exited or, when it stays on to read code back, has posted `done`
  // (it closes the input first): either way nothing reads the input after the scan is done.
  const hashed = new Promise<void>((resolve, reject) => {
    let outcome: { error: unknown } | 'done' | undefined;
    worker.on('message', (message: ScanMessage) => {
      if (message.kind === 'records') {
        for (const [name, sha1, sha256] of message.records) progress.settle(name, { kind: 'file', sha1: Buffer.from(sha1), sha256: Buffer.from(sha256) });
      } else if (message.kind === 'done') {
        outcome = 'done';
        if (output !== undefined) resolve();
      } else if (message.kind === 'readBack') {
        answers.get(message.name)?.(message.code ?? undefined);
        answers.delete(message.name);
      } else {
        const error = message.code === undefined ? new Error(message.message) : new SigningError(message.code, message.message, message.details === undefined ? {} : { details: message.details });
        progress.fail(message.name, error);
        outcome = { error };
      }
    });
    worker.on('error', (error) => (outcome ??= { error }));
    worker.on('exit', (code) => {
      signal?.removeEventListener('abort', stop);
      // Requests the thread did not answer (it failed or was stopped): the verifier reads those files.
      for (const resolve of answers.values()) resolve(undefined);
      answers.clear();
      // An abort before the scan is seen to be done fails it, as it fails the in-process scan.
      if (signal?.aborted === true) reject(signal.reason);
      else if (outcome === 'done') resolve();
      else reject(outcome?.error ?? new Error(`the hashing thread exited with code ${code} before it was done`));
    });
  });
  hashed.catch(() => {}); // surfaced through `done`
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
  let exited = false;
  worker.once('exit', () => (exited = true));
  const send = (request: ReadBackRequest): void => {
    if (!exited) worker.postMessage(request);
  };
  const readBack: CodeReadBack | undefined = output === undefined ? undefined : {
    request: (entry, wholeFile) => {
      if (exited) return Promise.resolve(undefined);
      const { promise, resolve } = Promise.withResolvers<StreamedCode | undefined>();
      answers.set(entry.name, resolve);
      send({ kind: 'readBack', location: entry, wholeFile });
      return promise;
    },
    close: () => send({ kind: 'close' }),
  };
  return { ...progress.scan(Promise.all([hashed, links]).then(() => undefined)), readBack };
}

function location(entry: ZipEntry): EntryLocation {
  if (entry.unreadable !== null) throw entry.unreadable;
  return locationOf(entry);
}
