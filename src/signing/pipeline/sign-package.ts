// The one way Signet signs a package and proves it: signPackage completes the certificate chain,
// signs, verifies the bytes written and returns one summary (identity, which profile signed which
// bundle, entitlements left out and why, what the verifier checked). `signet sign`, the task
// worker's thread pool and per-device super signing all come through here; nothing hands out an
// output that has not passed its verifier.
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { FileSource, SIGNING_READS, type DataSource } from '../data-source.ts';
import { FileOutput, type VerifiableSink } from './output.ts';
import type { SignEnv, SignPackageRequest, SignSummary } from './types.ts';

/**
 * Signs `input` into `output` (closed on return) and verifies what was written. Errors are
 * SigningErrors with catalogue codes: the input's or the key's (keystore_password_incorrect,
 * bundle_id_mismatch, certificate_chain_incomplete …) or verification_failed for an output that
 * does not verify. The caller discards the output on failure.
 */
export async function signPackage(request: SignPackageRequest, input: DataSource, output: VerifiableSink, env: SignEnv = {}): Promise<SignSummary> {
  // Engines load on use: a process that signs only APKs never loads the iOS stack, and back.
  if (request.platform === 'android') return (await import('./sign-android.ts')).signAndroid(request, input, output, env);
  return (await import('./sign-ios.ts')).signIos(request, input, output, env);
}

/**
 * signPackage from `input` (a file, a blob read where it is stored, a port to another thread's
 * source) into the file `outputPath`. The output is written to a hidden sibling and renamed only
 * once it verifies, so a failed or cancelled run leaves no output behind (an aborted thread
 * leaves the sibling in the caller's work folder, which the caller removes). `input` stays open.
 */
export async function signPackageToFile(request: SignPackageRequest, input: DataSource, outputPath: string, env: SignEnv = {}): Promise<SignSummary> {
  const partial = path.join(path.dirname(outputPath), `.${path.basename(outputPath)}.${process.pid}.partial`);
  try {
    const output = await FileOutput.create(partial);
    try {
      const summary = await signPackage(request, input, output, env);
      await rename(partial, outputPath);
      return summary;
    } finally {
      await output.close();
    }
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** signPackageToFile from one file to another. */
export async function signPackageFile(request: SignPackageRequest, inputPath: string, outputPath: string, env: SignEnv = {}): Promise<SignSummary> {
  const source = await FileSource.open(inputPath, SIGNING_READS);
  try {
    return await signPackageToFile(request, source, outputPath, env);
  } finally {
    await source.close();
  }
}
