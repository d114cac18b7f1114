// Signing runs on a piscina worker-thread pool inside the server process, so a 2 GB package
// being hashed and deflated never blocks the API's event loop. A PooledSigner is a Signer whose
// `sign` ships the request to a thread; the thread imports the engine module named in the
// wiring (src/main/signers.ts) and runs the real Signer there. Threads start on demand and exit
// when idle, so a server that is not signing carries no engine code at all.
import { Piscina } from 'piscina';
import { AppError, type ServiceErrorCode } from '../errors.ts';
import { SIGNING_ERRORS, SigningError, type SigningErrorCode } from '../signing/errors.ts';
import type { CertType, Platform, SignRequest, SignResult, Signer } from './signer.ts';
import type { ThreadOutcome, ThreadRequest } from './signer-thread.ts';

export interface SignerModule {
  platform: Platform;
  certTypes: readonly CertType[];
  /** file: URL of a module exporting a Signer class with a no-argument constructor. */
  module: string;
  exportName: string;
}

export class SignerPool {
  private readonly pool: Piscina;

  constructor(options: { threads: number; idleTimeoutMs?: number }) {
    this.pool = new Piscina({
      filename: new URL('./signer-thread.ts', import.meta.url).href,
      minThreads: 0,
      maxThreads: Math.max(1, options.threads),
      idleTimeout: options.idleTimeoutMs ?? 30_000,
      // The server runs with a tiny young generation (--max-semi-space-size=1 in bin/signet and
      // `npm start`, for flat memory while streaming uploads); signing threads churn through
      // many short-lived buffers and get V8's usual size back.
      resourceLimits: { maxYoungGenerationSizeMb: 48 },
    });
  }

  signer(spec: SignerModule): Signer {
    return {
      platform: spec.platform,
      certTypes: spec.certTypes,
      sign: (request) => this.run(spec, request),
    };
  }

  private async run(spec: SignerModule, request: SignRequest): Promise<SignResult> {
    const { signal, ...rest } = request;
    const message: ThreadRequest = { module: spec.module, exportName: spec.exportName, request: rest };
    // Aborting terminates the thread mid-work (piscina replaces it); the caller removes the output.
    const outcome = (await this.pool.run(message, { signal })) as ThreadOutcome;
    if (outcome.ok) return outcome.result;
    // Errors cross the thread boundary as data: rebuild the catalogue error with its code.
    if (outcome.code !== null && outcome.code in SIGNING_ERRORS) throw new SigningError(outcome.code as SigningErrorCode, outcome.message);
    if (outcome.code !== null) throw new AppError(outcome.code as ServiceErrorCode, outcome.message);
    throw new Error(`signer thread failed: ${outcome.message}`);
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
