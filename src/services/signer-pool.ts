// Signing runs on a piscina worker-thread pool inside the server process, so a 2 GB package
// being hashed and deflated never blocks the API's event loop. Every thread runs the one signing
// pipeline (signPackageToFile) with the settings the pool was started with (serialisable: the CA
// certificates of SIGNET_APPLE_CA_DIR as bytes, limits); a request names only the package, the
// key material and the profiles. The package is read where it is stored: a file (the disk
// store's blob) is opened by the thread itself; any other DataSource (S3 range GETs) cannot cross
// into a thread, so the thread's reads come back to this one through a MessagePort
// (storage/source-port.ts) and are answered from the caller's source. Threads start on demand and exit when idle, so a server that is
// not signing carries no engine code at all.
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError, type ServiceErrorCode } from '../errors.ts';
import { SIGNING_ERRORS, SigningError, type SigningErrorCode } from '../signing/errors.ts';
import { FileSource, type DataSource } from '../signing/data-source.ts';
import type { SignEnv, SignPackageRequest, SignSummary, SigningSettings } from '../signing/pipeline/types.ts';
import { serveSource } from '../storage/source-port.ts';
import type { ThreadOutcome, ThreadRequest } from './signer-thread.ts';

/**
 * Runs the signing pipeline from `input` (kept open by the caller meanwhile) to the file
 * `outputPath` (in a pool thread, or in-process).
 */
export type RunSignPackage = (request: SignPackageRequest, input: DataSource, outputPath: string, signal: AbortSignal) => Promise<SignSummary>;

export class SignerPool {
  private readonly pool: Piscina;

  /**
   * `describeApp: false`: an APK's summary carries no app identity (the pipeline's SignEnv option,
   * which skips reading it back from the output); for callers that already hold it.
   */
  constructor(options: { threads: number; idleTimeoutMs?: number; settings?: SigningSettings; describeApp?: boolean }) {
    this.pool = new Piscina({
      filename: new URL('./signer-thread.ts', import.meta.url).href,
      workerData: { ...options.settings, ...(options.describeApp === undefined ? {} : { describeApp: options.describeApp }) } satisfies SignEnv,
      minThreads: 0,
      maxThreads: Math.max(1, options.threads),
      idleTimeout: options.idleTimeoutMs ?? 30_000,
      // The server runs with a tiny young generation (--max-semi-space-size=1 in bin/signet and
      // `npm start`, for flat memory while streaming uploads); signing threads churn through
      // many short-lived buffers and get V8's usual size back.
      resourceLimits: { maxYoungGenerationSizeMb: 48 },
    });
  }

  /** signPackageToFile on a pool thread: `input` is opened there if it is a file, else read through a message port. */
  readonly run: RunSignPackage = async (request, input, outputPath, signal) => {
    // Aborting terminates the thread mid-work (piscina replaces it); the caller removes the output.
    if (input instanceof FileSource) {
      // Same bytes, same place; the port's copy per read costs ~15% on a 128 MiB re-sign.
      return this.#answer((await this.pool.run({ request, input: { path: input.path }, outputPath } satisfies ThreadRequest, { signal })) as ThreadOutcome);
    }
    // A read that fails here (S3 unreachable, a reset connection) reaches the thread as a message
    // only; when the run fails, that error is what the caller gets, with its code (a transient
    // one is retried by the worker rather than blamed on the package).
    let readError: unknown = null;
    const served: DataSource = {
      size: input.size,
      read: (offset, length) =>
        input.read(offset, length).catch((error: unknown) => {
          readError ??= error;
          throw error;
        }),
      close: async () => {},
    };
    const { port1, port2 } = new MessageChannel();
    serveSource(served, port1);
    const message: ThreadRequest = { request, input: { size: input.size, port: port2 }, outputPath };
    try {
      const outcome = (await this.pool.run(message, { signal, transferList: [port2] })) as ThreadOutcome;
      if (!outcome.ok && readError !== null) throw readError;
      return this.#answer(outcome);
    } finally {
      port1.close();
    }
  };

  #answer(outcome: ThreadOutcome): SignSummary {
    if (outcome.ok) return outcome.summary;
    // Errors cross the thread boundary as data: rebuild the catalogue error with its code.
    const details = outcome.details === undefined ? {} : { details: outcome.details };
    if (outcome.code !== null && outcome.code in SIGNING_ERRORS) throw new SigningError(outcome.code as SigningErrorCode, outcome.message, details);
    if (outcome.code !== null) throw new AppError(outcome.code as ServiceErrorCode, outcome.message, details);
    throw new Error(`signer thread failed: ${outcome.message}`);
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
