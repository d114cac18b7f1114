// The signing pipeline on the calling thread (tests, and callers that are already off the event
// loop); the service runs the same function on SignerPool threads.
import { signPackageToFile } from '../../signing/pipeline/sign-package.ts';
import type { SigningSettings } from '../../signing/pipeline/types.ts';
import type { RunSignPackage } from '../signer-pool.ts';

export function inProcessSigning(settings: SigningSettings = {}): RunSignPackage {
  return (request, input, outputPath, signal) => signPackageToFile(request, input, outputPath, { ...settings, signal });
}
