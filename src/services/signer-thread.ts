// Runs inside a SignerPool thread: the one signing pipeline (signPackageToFile) with the settings
// the pool was started with (piscina workerData: CA certificates, Mach-O threads, describeApp),
// returning the outcome as plain data (class identity and `code` would not survive structured
// cloning of a thrown error). The input is the blob where it is stored: a file on disk is opened here, any
// other source (S3 range GETs) is read through a MessagePort from the caller's DataSource; only
// the output is a local file.
import type { MessagePort } from 'node:worker_threads';
import { workerData } from 'piscina';
import { errorCodeOf } from '../errors.ts';
import { FileSource, SIGNING_READS, type DataSource } from '../signing/data-source.ts';
import { signPackageToFile } from '../signing/pipeline/sign-package.ts';
import type { SignEnv, SignPackageRequest, SignSummary } from '../signing/pipeline/types.ts';
import { PortSource } from '../storage/source-port.ts';

export interface ThreadRequest {
  request: SignPackageRequest;
  /** The input file, or the input's size and the port its reads go through (transferred with the request). */
  input: { path: string } | { size: number; port: MessagePort };
  outputPath: string;
}

export type ThreadOutcome = { ok: true; summary: SignSummary } | { ok: false; code: string | null; message: string; details?: Record<string, unknown> };

/** The pool's settings, and whether an APK's identity is read back (SignerPool's describeApp). */
const settings = (workerData ?? {}) as SignEnv;

export default async function sign(message: ThreadRequest): Promise<ThreadOutcome> {
  const { input } = message;
  let source: DataSource | null = null;
  try {
    source = 'path' in input ? await FileSource.open(input.path, SIGNING_READS) : new PortSource(input.size, input.port);
    // Cancellation terminates this thread, so no signal is needed here.
    return { ok: true, summary: await signPackageToFile(message.request, source, message.outputPath, settings) };
  } catch (error) {
    const details = error !== null && typeof error === 'object' && 'details' in error ? (error.details as Record<string, unknown> | undefined) : undefined;
    return { ok: false, code: errorCodeOf(error), message: error instanceof Error ? error.message : String(error), ...(details === undefined ? {} : { details }) };
  } finally {
    await source?.close();
  }
}
