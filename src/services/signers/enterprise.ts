// The Signers of enterprise tasks (Android with the account's own key, iOS with its enterprise
// p12 and in-house profiles). The stored credential becomes a request for the one signing
// pipeline (src/signing/pipeline), which completes the chain (Apple's CAs shipped with Signet +
// SIGNET_APPLE_CA_DIR), signs, verifies the output before anything leaves and reports which
// profile signed which bundle and which entitlements were left out. Engine failures keep their
// catalogue codes (keystore_password_incorrect, bundle_id_mismatch, certificate_chain_incomplete,
// verification_failed …), which the worker writes to task.error.code.
import { AppError } from '../../errors.ts';
import type { IosProfileInput, SignPackageRequest } from '../../signing/pipeline/types.ts';
import type { RunSignPackage } from '../signer-pool.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../signer.ts';
import { inProcessSigning } from './in-process.ts';

export class EnterpriseSigner implements Signer {
  readonly platform: Platform;
  readonly certTypes: readonly CertType[] = ['enterprise'];
  readonly #run: RunSignPackage;

  /** `run`: the pipeline on the SignerPool's threads in the service; in-process by default. */
  constructor(platform: Platform, run: RunSignPackage = inProcessSigning()) {
    this.platform = platform;
    this.#run = run;
  }

  async sign(request: SignRequest): Promise<SignResult> {
    const signing = this.platform === 'android' ? androidRequest(request) : iosRequest(request);
    const summary = await this.#run(signing, request.input, request.outputPath, request.signal);
    if (summary.platform === 'android') return { app: summary.app, verification: summary.verification };
    return { app: summary.app, verification: summary.verification, bundles: summary.bundles, warnings: summary.warnings };
  }
}

function androidRequest({ credential }: SignRequest): SignPackageRequest {
  if (credential.kind !== 'android') throw new AppError('cert_type_unsupported', 'An Android task needs an Android signing key.');
  // No key file name reaches the service: without an alias the v1 files are META-INF/CERT.*.
  return { platform: 'android', keystore: credential.keystore, password: credential.password, keyPassword: credential.keyPassword, alias: credential.alias, certificate: credential.certificate };
}

/**
 * The task may name a certificate profile per bundle id (`profileChoice`, checked here against the
 * profiles the certificate holds now); every other provisioned bundle takes the certificate
 * profile whose App ID matches it most specifically (the pipeline's choice).
 */
function iosRequest({ credential, profileChoice }: SignRequest): SignPackageRequest {
  if (credential.kind !== 'ios_enterprise') throw new AppError('cert_type_unsupported', 'An iOS enterprise task needs an iOS enterprise certificate (p12 and in-house profiles).');
  const pinned = new Map<string, string[]>();
  for (const [bundleId, id] of Object.entries(profileChoice ?? {})) {
    if (!credential.profiles.some((p) => p.id === id)) throw new AppError('profile_not_found', `The task signs "${bundleId}" with profile ${id}, which the certificate no longer holds.`, { details: { bundle_id: bundleId, profile_id: id } });
    pinned.set(id, [...(pinned.get(id) ?? []), bundleId]);
  }
  const profiles: IosProfileInput[] = credential.profiles.map((p) => ({ id: p.id, bytes: p.bytes, ...(pinned.has(p.id) ? { pinnedTo: pinned.get(p.id)! } : {}) }));
  return { platform: 'ios', identity: { p12: credential.p12, password: credential.password }, profiles };
}
