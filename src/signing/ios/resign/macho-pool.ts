// Runs Mach-O signing jobs: on a piscina worker pool (one thread per core; page hashing and the
// CMS are CPU-bound JavaScript) or in-process (tests, tiny apps). Inputs are transferred to the
// worker, results transferred back.
import { resultChunks, runMachOJob, type MachOJob, type MachOJobResult } from './macho-job.ts';
import { recordOffThread } from './scan.ts';

export interface MachOSignerPool {
  readonly concurrency: number;
  sign(job: MachOJob): Promise<MachOJobResult>;
  close(): Promise<void>;
}

export function inProcessPool(): MachOSignerPool {
  return {
    concurrency: 1,
    // The whole-file digests of a sealed file (SHA-1 and SHA-256 of every byte, a third of the
    // signing work) are taken on libuv's pool with WebCrypto, while this thread signs the next
    // file: on bench:ipa's 20 frameworks ~90 ms of the main thread's time.
    sign: async (job) => {
      const result = runMachOJob(job, false);
      if (!(job.sealed ?? true)) return result;
      const record = await recordOffThread(Buffer.concat(resultChunks(result), result.size));
      return { ...result, sha1: record.sha1, sha256: record.sha256 };
    },
    close: async () => {},
  };
}

export function workerPool(threads: number): MachOSignerPool {
  // piscina is loaded here, not on import: most apps are signed in-process, and `signet sign`
  // would otherwise load it (~15 ms) for nothing.
  const started = import('piscina').then(
    ({ Piscina }) =>
      new Piscina({
        filename: new URL('./macho-worker.ts', import.meta.url).href,
        // Started at once: a worker takes a while to load the engine (~0.35 s of CPU before
        // bin/signet shared its compile cache with workers, ~0.15 s less since), which then
        // overlaps the scanning that precedes the first signing job.
        minThreads: threads,
        maxThreads: threads,
        idleTimeout: 1000,
      }),
  );
  started.catch(() => {}); // awaited by sign and close, which report the failure
  return {
    concurrency: threads,
    sign: async (job) => {
      // Transfer only a buffer the job owns (starting its memory, at most a few spare bytes after:
      // zlib's one-chunk output has one); a view into a shared pool is copied first.
      const own = job.bytes.byteOffset === 0 && job.bytes.buffer.byteLength - job.bytes.byteLength <= 16;
      const bytes = own ? job.bytes : new Uint8Array(job.bytes);
      return (await (await started).run({ ...job, bytes }, { transferList: [bytes.buffer as ArrayBuffer] })) as MachOJobResult;
    },
    close: async () => (await started).destroy(),
  };
}
