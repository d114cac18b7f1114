// The Signer for iOS .ipa files with the account's enterprise identity (p12 + in-house profile):
// re-signs the whole app (every nested bundle and Mach-O file, leaf-first), then runs the
// whole-app verifier over the output before anything leaves — an output that does not verify is
// deleted and the task fails with `verification_failed`. Engine refusals keep their catalogue
// codes (bundle_id_mismatch, profile_expired, profile_certificate_mismatch, certificate_expired,
// invalid_package …), which the worker writes to task.error.code.
import { rename, rm } from 'node:fs/promises';
import { AppError } from '../../errors.ts';
import { loadIdentity } from '../../signing/cms/index.ts';
import { FileSink } from '../../signing/data-sink.ts';
import { FileSource } from '../../signing/data-source.ts';
import { SigningError } from '../../signing/errors.ts';
import { parseProvisioningProfile } from '../../signing/ios/profile/index.ts';
import { resignIpa, type ResignOptions, type ResignResult } from '../../signing/ios/resign/index.ts';
import { allProblems, assertIpaVerified, verifyIpa, type IpaVerification } from '../../signing/ios/verify-ipa/index.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../signer.ts';

export class IosEnterpriseSigner implements Signer {
  readonly platform: Platform = 'ios';
  readonly certTypes: readonly CertType[] = ['enterprise'];

  async sign(request: SignRequest): Promise<SignResult> {
    const { credential, signal } = request;
    if (credential.kind !== 'ios_enterprise') throw new AppError('cert_type_unsupported', 'An iOS enterprise task needs an iOS enterprise certificate (p12 and in-house profile).');
    const identity = await loadIdentity(credential.p12, { password: credential.password });
    const profile = parseProvisioningProfile(credential.profile);
    signal.throwIfAborted();
    try {
      const { result, verification } = await resignIpaFile(request.inputPath, request.outputPath, { identity, profiles: [profile], signal });
      return { app: result.app, verification: summarize(verification) };
    } catch (error) {
      throw asVerificationFailure(error);
    }
  }
}

/**
 * An output that failed its own verification is the signer's failure, not the user's input:
 * the engine's `ipa_signature_invalid` becomes the service's `verification_failed`. Other errors
 * pass through with their codes.
 */
export function asVerificationFailure(error: unknown): unknown {
  if (error instanceof SigningError && error.code === 'ipa_signature_invalid') {
    return new AppError('verification_failed', error.message, { cause: error, details: error.details ?? {} });
  }
  return error;
}

export interface IpaFileResult {
  result: ResignResult;
  verification: IpaVerification;
}

/**
 * Re-signs `inputPath` into `outputPath` and verifies the output. The output is written to a
 * sibling ".partial" file and renamed only once it verifies, so a failure leaves nothing behind.
 * Throws `ipa_signature_invalid` (with every problem in details) when the output does not verify.
 */
export async function resignIpaFile(inputPath: string, outputPath: string, options: ResignOptions): Promise<IpaFileResult> {
  const partial = `${outputPath}.${process.pid}.partial`;
  const source = await FileSource.open(inputPath);
  try {
    const sink = await FileSink.create(partial);
    let result: ResignResult;
    try {
      result = await resignIpa(source, sink, options);
    } finally {
      await sink.close();
    }
    const check = await FileSource.open(partial);
    let verification: IpaVerification;
    try {
      verification = await verifyIpa(check, options.now === undefined ? {} : { now: options.now });
    } finally {
      await check.close();
    }
    assertIpaVerified(verification, allProblems(verification));
    await rename(partial, outputPath);
    return { result, verification };
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  } finally {
    await source.close();
  }
}

/** One line per bundle for the task record. */
function summarize(report: IpaVerification): string[] {
  return report.bundles.map((b) => {
    const code = b.code.map((c) => `${c.path.slice(b.path.length)} [${c.slices.map((s) => `${s.arch} ${s.hashTypes.join('+')}`).join(', ')}]`).join('; ');
    return `${b.path}: ${b.bundleId} — ${b.code.length} Mach-O (${code}), ${b.sealedFiles} sealed files${b.profile ? `, profile ${b.profile.uuid} until ${b.profile.expiresAt.slice(0, 10)}` : ''}`;
  });
}

