// Runs inside a SignerPool thread: the one signing pipeline (signPackageFile) with the settings
// the pool was started with (piscina workerData: CA certificates, Mach-O threads), returning the
// outcome as plain data (class identity and `code` would not survive structured cloning of a
// thrown error).
import { workerData } from 'piscina';
import { errorCodeOf } from '../errors.ts';
import { signPackageFile } from '../signing/pipeline/sign-package.ts';
import type { SignPackageRequest, SignSummary, SigningSettings } from '../signing/pipeline/types.ts';

export interface ThreadRequest {
  request: SignPackageRequest;
  inputPath: string;
  outputPath: string;
}

export type ThreadOutcome = { ok: true; summary: SignSummary } | { ok: false; code: string | null; message: string; details?: Record<string, unknown> };

const settings = (workerData ?? {}) as SigningSettings;

export default async function sign(message: ThreadRequest): Promise<ThreadOutcome> {
  try {
    // Cancellation terminates this thread, so no signal is needed here.
    return { ok: true, summary: await signPackageFile(message.request, message.inputPath, message.outputPath, settings) };
  } catch (error) {
    const details = error !== null && typeof error === 'object' && 'details' in error ? (error.details as Record<string, unknown> | undefined) : undefined;
    return { ok: false, code: errorCodeOf(error), message: error instanceof Error ? error.message : String(error), ...(details === undefined ? {} : { details }) };
  }
}
