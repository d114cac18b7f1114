// Runs inside a SignerPool thread: the one signing pipeline (signPackageToFile) with the settings
// the pool was started with (piscina workerData: CA certificates, Mach-O threads), returning the
// outcome as plain data (class identity and `code` would not survive structured cloning of a
// thrown error). The input is read through a MessagePort from the caller's DataSource (the blob
// where it is stored: the file on disk, range GETs on S3); only the output is a local file.
import type { MessagePort } from 'node:worker_threads';
import { workerData } from 'piscina';
import { errorCodeOf } from '../errors.ts';
import { signPackageToFile } from '../signing/pipeline/sign-package.ts';
import type { SignPackageRequest, SignSummary, SigningSettings } from '../signing/pipeline/types.ts';
import { PortSource } from '../storage/source-port.ts';

export interface ThreadRequest {
  request: SignPackageRequest;
  /** The input's size and the port its reads go through (transferred with the request). */
  input: { size: number; port: MessagePort };
  outputPath: string;
}

export type ThreadOutcome = { ok: true; summary: SignSummary } | { ok: false; code: string | null; message: string; details?: Record<string, unknown> };

const settings = (workerData ?? {}) as SigningSettings;

export default async function sign(message: ThreadRequest): Promise<ThreadOutcome> {
  const source = new PortSource(message.input.size, message.input.port);
  try {
    // Cancellation terminates this thread, so no signal is needed here.
    return { ok: true, summary: await signPackageToFile(message.request, source, message.outputPath, settings) };
  } catch (error) {
    const details = error !== null && typeof error === 'object' && 'details' in error ? (error.details as Record<string, unknown> | undefined) : undefined;
    return { ok: false, code: errorCodeOf(error), message: error instanceof Error ? error.message : String(error), ...(details === undefined ? {} : { details }) };
  } finally {
    await source.close();
  }
}
