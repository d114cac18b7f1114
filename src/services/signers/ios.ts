// The Signer for iOS .ipa files with the account's enterprise identity (p12 + in-house profiles).
// The task may name a certificate profile per bundle id (`profileChoice`, checked here against
// the profiles the certificate holds now); every other provisioned bundle takes the certificate
// profile whose App ID matches it most specifically. The one pipeline (src/signing/pipeline)
// completes the chain (bundled Apple CAs + SIGNET_APPLE_CA_DIR), re-signs the whole app, verifies
// it and reports which profile signed which bundle and which entitlements were left out. Engine
// refusals keep their catalogue codes (bundle_id_mismatch, profile_expired,
// certificate_chain_incomplete, verification_failed …), which the worker writes to task.error.code.
import { AppError } from '../../errors.ts';
import type { IosProfileInput } from '../../signing/pipeline/types.ts';
import type { RunSignPackage } from '../signer-pool.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../signer.ts';
import { inProcessSigning } from './in-process.ts';

export class IosEnterpriseSigner implements Signer {
  readonly platform: Platform = 'ios';
  readonly certTypes: readonly CertType[] = ['enterprise'];
  readonly #run: RunSignPackage;

  constructor(run: RunSignPackage = inProcessSigning()) {
    this.#run = run;
  }

  async sign(request: SignRequest): Promise<SignResult> {
    const { credential } = request;
    if (credential.kind !== 'ios_enterprise') throw new AppError('cert_type_unsupported', 'An iOS enterprise task needs an iOS enterprise certificate (p12 and in-house profiles).');
    const pinned = new Map<string, string[]>();
    for (const [bundleId, id] of Object.entries(request.profileChoice ?? {})) {
      if (!credential.profiles.some((p) => p.id === id)) throw new AppError('profile_not_found', `The task signs "${bundleId}" with profile ${id}, which the certificate no longer holds.`, { details: { bundle_id: bundleId, profile_id: id } });
      pinned.set(id, [...(pinned.get(id) ?? []), bundleId]);
    }
    const profiles: IosProfileInput[] = credential.profiles.map((p) => ({ id: p.id, bytes: p.bytes, ...(pinned.has(p.id) ? { pinnedTo: pinned.get(p.id)! } : {}) }));
    const summary = await this.#run({ platform: 'ios', identity: { p12: credential.p12, password: credential.password }, profiles }, request.inputPath, request.outputPath, request.signal);
    return { app: summary.app, verification: summary.verification, bundles: summary.bundles, warnings: summary.warnings };
  }
}
