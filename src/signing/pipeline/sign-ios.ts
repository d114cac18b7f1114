// signPackage for an .ipa: open the identity with its chain completed, choose each bundle's
// profile, re-sign the whole app (ios/resign), then verify the bytes written from the re-signer's
// proof (ios/verify-ipa/verify-written.ts): entries copied unchanged are proved by compressed
// bytes identical to the input's, whose content the signing pass hashed; everything written is
// read back and checked in full — the same report verifyIpa gives, without a second content pass
// over the copied bytes (SPECIFICATION.md, "Verifying what was written"). `signet verify` keeps
// the full independent verifier. An output that does not verify is the signer's failure:
// verification_failed, with every problem in details.
import type { DataSource } from '../data-source.ts';
import { SigningError } from '../errors.ts';
import { resignIpaProved } from '../ios/resign/index.ts';
import { verifyWritten, type IpaVerification } from '../ios/verify-ipa/index.ts';
import { describeIdentity, openSigningIdentity } from './identity.ts';
import type { VerifiableSink } from './output.ts';
import { chooseProfiles, leftOut, signedBundles } from './profiles.ts';
import type { IosSignRequest, SignEnv, SignSummary } from './types.ts';
import { assertOutputVerified } from './verdict.ts';

export async function signIos(request: IosSignRequest, input: DataSource, output: VerifiableSink, env: SignEnv): Promise<SignSummary> {
  const identity = await openSigningIdentity(request.identity, env);
  const profiles = chooseProfiles(request.profiles);
  env.signal?.throwIfAborted();
  let signed;
  try {
    signed = await resignIpaProved(input, output, {
      identity,
      profiles: profiles.candidates,
      profileByBundleId: profiles.pinned,
      // Verified below: the re-signer's thread reads the signed code back as it is written.
      readBackForVerification: true,
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
  const { result, proof } = signed;
  // The input stays open (the caller closes it) until the copied entries are proved against it.
  const check = await output.reopen();
  let verification: IpaVerification;
  try {
    verification = await verifyWritten(check, input, proof, env.now === undefined ? {} : { now: env.now });
  } catch (error) {
    // Output Signet wrote that its verifier cannot even read (a zip structure or CRC refused) is
    // the signer's failure too.
    if (error instanceof SigningError) throw new SigningError('verification_failed', `The signed .ipa could not be verified: ${error.message}`, { cause: error, details: error.details ?? {} });
    throw error;
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
export function describeBundles(report: IpaVerification): string[] {
  return report.bundles.map((b) => {
    const code = b.code.map((c) => `${c.path.slice(b.path.length)} [${c.slices.map((s) => `${s.arch} ${s.hashTypes.join('+')}`).join(', ')}]`).join('; ');
    return `${b.path}: ${b.bundleId} — ${b.code.length} Mach-O (${code}), ${b.sealedFiles} sealed files${b.profile ? `, profile ${b.profile.uuid} until ${b.profile.expiresAt.slice(0, 10)}` : ''}`;
  });
}
