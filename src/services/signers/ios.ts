// The Signer for iOS .ipa files with the account's enterprise identity (p12 + in-house profiles):
// each provisioned bundle (app, extensions, watch app) takes the profile the task names for its
// bundle id, else the certificate profile whose App ID matches it most specifically (explicit
// before wildcard, ../../signing/ios/profile/checks.ts); a bundle no profile covers fails the
// task naming every such bundle. It re-signs the whole app (every nested bundle and Mach-O file,
// leaf-first), with each bundle's entitlements derived from its own profile, then runs the
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
import type { TaskBundle, TaskWarning } from '../../db/schema.ts';
import { parseProvisioningProfile, type ProvisioningProfile } from '../../signing/ios/profile/index.ts';
import { resignIpa, type ResignOptions, type ResignResult } from '../../signing/ios/resign/index.ts';
import { allProblems, assertIpaVerified, verifyIpa, type IpaVerification } from '../../signing/ios/verify-ipa/index.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../signer.ts';

export class IosEnterpriseSigner implements Signer {
  readonly platform: Platform = 'ios';
  readonly certTypes: readonly CertType[] = ['enterprise'];

  async sign(request: SignRequest): Promise<SignResult> {
    const { credential, signal } = request;
    if (credential.kind !== 'ios_enterprise') throw new AppError('cert_type_unsupported', 'An iOS enterprise task needs an iOS enterprise certificate (p12 and in-house profiles).');
    const identity = await loadIdentity(credential.p12, { password: credential.password });
    const profiles = credential.profiles.map((p) => ({ id: p.id, profile: parseProvisioningProfile(p.bytes) }));
    const byId = new Map(profiles.map((p) => [p.id, p.profile]));
    const profileByBundleId = new Map<string, ProvisioningProfile>();
    for (const [bundleId, id] of Object.entries(request.profileChoice ?? {})) {
      const chosen = byId.get(id);
      if (!chosen) throw new AppError('profile_not_found', `The task signs "${bundleId}" with profile ${id}, which the certificate no longer holds.`, { details: { bundle_id: bundleId, profile_id: id } });
      profileByBundleId.set(bundleId, chosen);
    }
    signal.throwIfAborted();
    try {
      const { result, verification } = await resignIpaFile(request.inputPath, request.outputPath, { identity, profiles: profiles.map((p) => p.profile), profileByBundleId, signal });
      return { app: result.app, verification: summarize(verification), bundles: signedBundles(result, profiles), warnings: leftOut(result) };
    } catch (error) {
      throw asVerificationFailure(error);
    }
  }
}

/** Which certificate profile signed which bundle, for the task's answer. */
export function signedBundles(result: ResignResult, profiles: ReadonlyArray<{ id: string | null; profile: ProvisioningProfile }>): TaskBundle[] {
  return result.bundles.flatMap((bundle): TaskBundle[] => {
    if (!bundle.profile) return [];
    const used = profiles.find((p) => p.profile.uuid === bundle.profile!.uuid);
    return [
      {
        path: bundle.path,
        bundleId: bundle.bundleId,
        applicationIdentifier: bundle.profile.applicationIdentifier,
        profile: { id: used?.id ?? null, name: bundle.profile.name, uuid: bundle.profile.uuid, type: used?.profile.type ?? 'unknown', expiresAt: bundle.profile.expiresAt },
        capabilities: [],
      },
    ];
  });
}

/** The entitlements each bundle's profile did not grant, as task warnings. */
export function leftOut(result: ResignResult): TaskWarning[] {
  return result.bundles.flatMap((bundle) =>
    bundle.droppedEntitlements.map((dropped) => ({
      code: 'entitlement_left_out' as const,
      message: `${dropped.key} left out of ${bundle.bundleId}: its profile ${dropped.reason === 'not_granted' ? 'does not grant it' : dropped.reason === 'value_not_granted' ? 'grants other values' : 'grants "*" and the app had no value to keep'}`,
      bundleId: bundle.bundleId,
      entitlement: dropped.key,
      reason: dropped.reason,
    })),
  );
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

