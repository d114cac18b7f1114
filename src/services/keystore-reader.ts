// Opens uploaded keystores on worker threads, never on the API's event loop. The key derivation
// of a keystore is the file's to choose (PKCS#12 MAC and PBE iteration counts): the engine caps
// it (keystore_too_expensive), but even within the cap pkijs derives the MAC key synchronously in
// JavaScript for up to seconds, during which a main-thread load would stall every request. Threads
// start on demand and exit when idle, so a server that is not reading keystores carries none.
import { Piscina } from 'piscina';
import { AppError, type ServiceErrorCode } from '../errors.ts';
import type { Identity, LoadIdentityOptions } from '../signing/cms/index.ts';
import { SIGNING_ERRORS, SigningError, type SigningErrorCode } from '../signing/errors.ts';
import type { KeystoreOutcome, KeystoreRequest } from './keystore-thread.ts';

export class KeystoreReader {
  private readonly pool: Piscina;

  constructor(options: { threads?: number; idleTimeoutMs?: number } = {}) {
    this.pool = new Piscina({
      filename: new URL('./keystore-thread.ts', import.meta.url).href,
      minThreads: 0,
      maxThreads: Math.max(1, options.threads ?? 2),
      idleTimeout: options.idleTimeoutMs ?? 30_000,
    });
  }

  /** loadIdentity (src/signing/cms) on a thread, with the engine's catalogue errors intact. */
  async loadIdentity(bytes: Buffer, options: LoadIdentityOptions = {}): Promise<Identity> {
    const request: KeystoreRequest = { bytes, options };
    const outcome = (await this.pool.run(request)) as KeystoreOutcome;
    if (outcome.ok) {
      const { identity } = outcome;
      // Structured cloning delivers Buffers as plain Uint8Arrays.
      const buffer = (value: Uint8Array): Buffer => Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      return { ...identity, certificate: buffer(identity.certificate), chain: identity.chain.map(buffer) };
    }
    if (outcome.code !== null && outcome.code in SIGNING_ERRORS) throw new SigningError(outcome.code as SigningErrorCode, outcome.message);
    if (outcome.code !== null) throw new AppError(outcome.code as ServiceErrorCode, outcome.message);
    throw new SigningError('keystore_invalid', `The key file cannot be read: ${outcome.message}`);
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
