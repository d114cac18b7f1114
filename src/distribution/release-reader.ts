// Reads a release's facts (icon, minimum OS, devices, ABIs) on a worker thread, never on the
// event loop that serves requests: decoding an icon from a compiled asset catalog (LZFSE, then a
// PNG encode) costs 0.3–0.5 s of CPU, a CgBI conversion tens of milliseconds, and the embedded
// worker shares its process with the API. Publishing happens once per release; pages then serve
// the stored results. The thread starts on demand and exits when idle.
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError, type ServiceErrorCode } from '../errors.ts';
import { SIGNING_ERRORS, SigningError, type SigningErrorCode } from '../signing/errors.ts';
import type { DataSource } from '../signing/data-source.ts';
import { serveSource } from '../storage/source-port.ts';
import type { ReleaseFacts } from './release-facts.ts';
import type { ReleaseReaderOutcome } from './release-reader-thread.ts';

export class ReleaseReader {
  readonly #pool: Piscina;

  constructor(options: { idleTimeoutMs?: number } = {}) {
    this.#pool = new Piscina({
      filename: new URL('./release-reader-thread.ts', import.meta.url).href,
      minThreads: 0,
      // Releases are published one at a time per task; one thread keeps the CPU for signing.
      maxThreads: 1,
      idleTimeout: options.idleTimeoutMs ?? 30_000,
    });
  }

  /**
   * The facts of the signed package `source` (kept open by the caller meanwhile): the thread reads
   * it through a message port, so a package on S3 is read with range requests, not downloaded.
   */
  async read(source: DataSource): Promise<ReleaseFacts> {
    const { port1, port2 } = new MessageChannel();
    serveSource(source, port1);
    let outcome: ReleaseReaderOutcome;
    try {
      outcome = (await this.#pool.run({ size: source.size, port: port2 }, { transferList: [port2] })) as ReleaseReaderOutcome;
    } finally {
      port1.close();
    }
    if (outcome.ok) {
      const { icon } = outcome.facts;
      // Structured cloning delivers Buffers as plain Uint8Arrays.
      return { ...outcome.facts, icon: icon && { ...icon, bytes: Buffer.from(icon.bytes.buffer, icon.bytes.byteOffset, icon.bytes.byteLength) } };
    }
    if (outcome.code !== null && outcome.code in SIGNING_ERRORS) throw new SigningError(outcome.code as SigningErrorCode, outcome.message);
    if (outcome.code !== null) throw new AppError(outcome.code as ServiceErrorCode, outcome.message);
    throw new Error(`release reader thread failed: ${outcome.message}`);
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}
