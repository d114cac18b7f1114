// Runs Mach-O signing jobs: on a piscina worker pool (one thread per core; page hashing and the
// CMS are CPU-bound JavaScript) or in-process (tests, tiny apps). Inputs are transferred to the
// worker, results transferred back.
import { runMachOJob, type MachOJob, type MachOJobResult } from './macho-job.ts';

export interface MachOSignerPool {
  readonly concurrency: number;
  sign(job: MachOJob): Promise<MachOJobResult>;
  close(): Promise<void>;
}

export function inProcessPool(): MachOSignerPool {
  return {
    concurrency: 1,
    // The whole-file digests of a sealed file are taken here, as it is signed. They once went to
    // libuv's pool through WebCrypto, which copies its input: two 3 MiB copies per framework and
    // a third to join the signed file's chunks cost the main thread more than hashing it (bench:ipa,
    // 8 alternating pairs: 1.335 against 1.360 s, 1.85 against 1.90 s of CPU, 12 MiB less memory).
    sign: async (job) => runMachOJob(job),
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
