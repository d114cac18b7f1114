// signPackage for an .ipa: open the identity with its chain completed, choose each bundle's
// profile, re-sign the whole app (ios/resign), then run the whole-app verifier (ios/verify-ipa)
// over the bytes written. An output that does not verify is the signer's failure:
// verification_failed, with every problem in details.
import type { DataSource } from '../data-source.ts';
import { resignIpa } from '../ios/resign/index.ts';
import { verifyIpa, type IpaVerification } from '../ios/verify-ipa/index.ts';
import { describeIdentity, openSigningIdentity } from './identity.ts';
import type { VerifiableSink } from './output.ts';
import { chooseProfiles, leftOut, signedBundles } from './profiles.ts';
import type { IosSignRequest, SignEnv, SignSummary } from './types.ts';
import { assertOutputVerified } from './verdict.ts';

export async function signIos(request: IosSignRequest, input: DataSource, output: VerifiableSink, env: SignEnv): Promise<SignSummary> {
  const identity = await openSigningIdentity(request.identity, env);
  const profiles = chooseProfiles(request.profiles);
  env.signal?.throwIfAborted();
  let result;
  try {
    result = await resignIpa(input, output, {
      identity,
      profiles: profiles.candidates,
      profileByBundleId: profiles.pinned,
      ...(request.overrides === undefined ? {} : { overrides: request.overrides }),
      ...(request.entitlements === undefined ? {} : { entitlements: request.entitlements }),
      ...(env.machOThreads === undefined ? {} : { workers: env.machOThreads }),
      ...(env.now === undefined ? {} : { now: env.now }),
      ...(env.signingTime === undefined ? {} : { signingTime: env.signingTime }),
      ...(env.signal === undefined ? {} : { signal: env.signal }),
    });
  } finally {
    await output.close();
  }
  const check = await output.reopen();
  let verification: IpaVerification;
  try {
    verification = await verifyIpa(check, env.now === undefined ? {} : { now: env.now });
  } finally {
    await check.close();
  }
  assertOutputVerified(verification);
  return {
    platform: 'ios',
    app: result.app,
    identity: describeIdentity(identity, env.now ?? new Date()),
    bundles: signedBundles(result, profiles.parsed),
    warnings: leftOut(result),
    verification: describeBundles(verification),
    ios: { entries: result.entries, bundles: result.bundles, signer: verification.signer ?? null },
  };
}

/** One line per bundle: its Mach-O files and slices, sealed files and profile. */
function describeBundles(report: IpaVerification): string[] {
  return report.bundles.map((b) => {
    const code = b.code.map((c) => `${c.path.slice(b.path.length)} [${c.slices.map((s) => `${s.arch} ${s.hashTypes.join('+')}`).join(', ')}]`).join('; ');
    return `${b.path}: ${b.bundleId} — ${b.code.length} Mach-O (${code}), ${b.sealedFiles} sealed files${b.profile ? `, profile ${b.profile.uuid} until ${b.profile.expiresAt.slice(0, 10)}` : ''}`;
  });
}
