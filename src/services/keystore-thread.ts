// Runs inside a KeystoreReader thread: opens an uploaded keystore (PKCS#12, JKS, PEM, PKCS#8)
// with the engine's loadIdentity and returns the identity, or the failure as plain data (a thrown
// error's class and `code` would not survive structured cloning). KeyObjects clone across threads.
import os from 'node:os';
import { errorCodeOf } from '../errors.ts';
import { loadIdentity, type Identity, type LoadIdentityOptions } from '../signing/cms/index.ts';

export interface KeystoreRequest {
  bytes: Uint8Array;
  options: Omit<LoadIdentityOptions, 'certificate'> & { certificate?: Uint8Array };
}

export type KeystoreOutcome = { ok: true; identity: Identity } | { ok: false; code: string | null; message: string };

const asBuffer = (value: Uint8Array): Buffer => Buffer.from(value.buffer, value.byteOffset, value.byteLength);

let niced = false;

/**
 * Key derivation is background work: it must not compete with the API's event loop for the CPU.
 * On Linux a nice value belongs to a thread, and setpriority(2) with pid 0 changes the calling
 * thread only, so this lowers the keystore thread and nothing else (elsewhere it may lower the
 * process, or be refused; either way the reader works).
 */
function lowerPriority(): void {
  if (niced) return;
  niced = true;
  try {
    os.setPriority(0, 10);
  } catch {
    // not permitted here: run at normal priority
  }
}

export default async function open(request: KeystoreRequest): Promise<KeystoreOutcome> {
  lowerPriority();
  try {
    const { certificate, ...rest } = request.options;
    const options: LoadIdentityOptions = certificate === undefined ? rest : { ...rest, certificate: asBuffer(certificate) };
    return { ok: true, identity: await loadIdentity(asBuffer(request.bytes), options) };
  } catch (error) {
    return { ok: false, code: errorCodeOf(error), message: error instanceof Error ? error.message : String(error) };
  }
}
