// Signing runs on a piscina worker-thread pool inside the server process, so a 2 GB package
// being hashed and deflated never blocks the API's event loop. Every thread runs the one signing
// pipeline (signPackageFile) with the settings the pool was started with (serialisable: the CA
// certificates of SIGNET_APPLE_CA_DIR as bytes, limits); a request names only the package, the
// key material and the profiles. Threads start on demand and exit when idle, so a server that is
// not signing carries no engine code at all.
import { Piscina } from 'piscina';
import { AppError, type ServiceErrorCode } from '../errors.ts';
import { SIGNING_ERRORS, SigningError, type SigningErrorCode } from '../signing/errors.ts';
import type { SignPackageRequest, SignSummary, SigningSettings } from '../signing/pipeline/types.ts';
import type { ThreadOutcome, ThreadRequest } from './signer-thread.ts';

/** Runs the signing pipeline from one file to another (in a pool thread, or in-process). */
export type RunSignPackage = (request: SignPackageRequest, inputPath: string, outputPath: string, signal: AbortSignal) => Promise<SignSummary>;

export class SignerPool {
  private readonly pool: Piscina;

  constructor(options: { threads: number; idleTimeoutMs?: number; settings?: SigningSettings }) {
    this.pool = new Piscina({
      filename: new URL('./signer-thread.ts', import.meta.url).href,
      workerData: options.settings ?? {},
      minThreads: 0,
      maxThreads: Math.max(1, options.threads),
      idleTimeout: options.idleTimeoutMs ?? 30_000,
      // The server runs with a tiny young generation (--max-semi-space-size=1 in bin/signet and
      // `npm start`, for flat memory while streaming uploads); signing threads churn through
      // many short-lived buffers and get V8's usual size back.
      resourceLimits: { maxYoungGenerationSizeMb: 48 },
    });
  }

  /** signPackageFile on a pool thread. */
  readonly run: RunSignPackage = async (request, inputPath, outputPath, signal) => {
    const message: ThreadRequest = { request, inputPath, outputPath };
    // Aborting terminates the thread mid-work (piscina replaces it); the caller removes the output.
    const outcome = (await this.pool.run(message, { signal })) as ThreadOutcome;
    if (outcome.ok) return outcome.summary;
    // Errors cross the thread boundary as data: rebuild the catalogue error with its code.
    const details = outcome.details === undefined ? {} : { details: outcome.details };
    if (outcome.code !== null && outcome.code in SIGNING_ERRORS) throw new SigningError(outcome.code as SigningErrorCode, outcome.message, details);
    if (outcome.code !== null) throw new AppError(outcome.code as ServiceErrorCode, outcome.message, details);
    throw new Error(`signer thread failed: ${outcome.message}`);
  };

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
