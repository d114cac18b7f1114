// Runs inside a SignerPool thread: loads the engine module once per thread, signs, and returns
// the outcome as plain data (class identity and `code` would not survive structured cloning of
// a thrown error).
import { errorCodeOf } from '../errors.ts';
import type { Credential } from '../db/credential.ts';
import type { SignRequest, SignResult, Signer } from './signer.ts';

export interface ThreadRequest {
  module: string;
  exportName: string;
  request: Omit<SignRequest, 'signal'>;
}

export type ThreadOutcome = { ok: true; result: SignResult } | { ok: false; code: string | null; message: string };

const signers = new Map<string, Promise<Signer>>();

async function signerFor(module: string, exportName: string): Promise<Signer> {
  const key = `${module}#${exportName}`;
  let signer = signers.get(key);
  if (!signer) {
    signer = import(module).then((loaded: Record<string, new () => Signer>) => {
      const SignerClass = loaded[exportName];
      if (typeof SignerClass !== 'function') throw new Error(`${module} does not export ${exportName}`);
      return new SignerClass();
    });
    signers.set(key, signer);
  }
  return signer;
}

/** Structured cloning delivers Buffers as plain Uint8Arrays; the engines expect Buffers. */
function revive(credential: Credential): Credential {
  const buffer = (value: Uint8Array): Buffer => Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (credential.kind === 'ios_enterprise') return { ...credential, p12: buffer(credential.p12), profiles: credential.profiles.map((p) => ({ id: p.id, bytes: buffer(p.bytes) })) };
  if (credential.kind === 'developer_accounts') return credential;
  return { ...credential, keystore: buffer(credential.keystore), certificate: credential.certificate === null ? null : buffer(credential.certificate) };
}

export default async function sign(message: ThreadRequest): Promise<ThreadOutcome> {
  try {
    const signer = await signerFor(message.module, message.exportName);
    // Cancellation terminates this thread, so the engine's own signal never fires here.
    const result = await signer.sign({ ...message.request, credential: revive(message.request.credential), signal: new AbortController().signal });
    return { ok: true, result };
  } catch (error) {
    return { ok: false, code: errorCodeOf(error), message: error instanceof Error ? error.message : String(error) };
  }
}
