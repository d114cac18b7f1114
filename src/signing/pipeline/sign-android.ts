// signPackage for an APK: open the key, sign v1/v2/v3 (android/sign), then verify the bytes
// written with Signet's verifier over every platform level the output serves. An output that
// does not verify is the signer's failure: verification_failed.
import { signApk, v1SignerNameFor, verifyApk } from '../android/index.ts';
import { loadIdentity, type LoadIdentityOptions } from '../cms/index.ts';
import type { DataSource } from '../data-source.ts';
import { SigningError } from '../errors.ts';
import { collectBetweenPhases } from '../reclaim.ts';
import { toBuffer } from './bytes.ts';
import { FIRST_V2_SDK } from './constants.ts';
import { describeIdentity } from './identity.ts';
import type { VerifiableSink } from './output.ts';
import type { AndroidSignRequest, SignEnv, SignSummary } from './types.ts';


export async function signAndroid(request: AndroidSignRequest, input: DataSource, output: VerifiableSink, env: SignEnv): Promise<SignSummary> {
  const options: LoadIdentityOptions = {
    ...(request.password == null ? {} : { password: request.password }),
    ...(request.keyPassword == null ? {} : { keyPassword: request.keyPassword }),
    ...(request.alias == null ? {} : { alias: request.alias }),
    ...(request.certificate == null ? {} : { certificate: toBuffer(request.certificate) }),
  };
  const identity = await (env.loadIdentity ?? loadIdentity)(toBuffer(request.keystore), options);
  env.signal?.throwIfAborted();
  let signed;
  try {
    signed = await signApk(input, output, {
      identity,
      // apksigner: the keystore alias names the v1 signature files, else the key file's name.
      v1SignerName: v1SignerNameFor(identity.alias ?? request.alias ?? undefined, request.keyFileName),
      ...(request.schemes === undefined ? {} : { schemes: request.schemes }),
      ...(request.minSdk === undefined ? {} : { minSdk: request.minSdk }),
      ...(env.signal === undefined ? {} : { signal: env.signal }),
      // Verified below: part of the content digest is taken while the signer finishes.
      readBackForVerification: true,
    });
  } finally {
    await output.close();
  }
  // Signing built large short-lived structures; verification builds its own (reclaim.ts).
  collectBetweenPhases();
  // Without v1, devices below API 24 cannot install the APK: verify for the range it serves.
  const verifiedFromSdk = signed.schemes.v1 ? signed.minSdk : Math.max(signed.minSdk, FIRST_V2_SDK);
  const check = await output.reopen();
  try {
    const report = await verifyApk(check, { minSdk: verifiedFromSdk, written: signed.written, ...(signed.readBack === null ? {} : { readBack: signed.readBack }) });
    if (!report.verified) {
      throw new SigningError('verification_failed', `The signed APK did not verify: ${report.errors.map((e) => e.message).join('; ')}`, { details: { errors: report.errors } });
    }
    const verification: string[] = (['v1', 'v2', 'v3', 'v3.1'] as const).filter((scheme) => report.schemes[scheme].verified);
    // Android ignores certificate validity, so an expired key still signs; the summary says so.
    const expired = report.signers.find((s) => s.expired);
    if (expired !== undefined) verification.push(`certificate expired on ${expired.notAfter.slice(0, 10)} (accepted: Android does not check validity)`);
    // The inspector loads only when asked for (it brings both platforms' readers).
    const info = env.describeApp === false ? null : await (await import('../inspect/index.ts')).inspectPackage(check, { iconBytes: false });
    return {
      platform: 'android',
      app: { bundleId: info?.bundleId ?? null, name: info?.name ?? null, version: info?.version ?? null, build: info?.build ?? null },
      identity: describeIdentity(identity, env.now ?? new Date()),
      bundles: [],
      warnings: [],
      verification,
      android: { schemes: signed.schemes, signatureAlgorithm: signed.signatureAlgorithm, minSdk: signed.minSdk, verifiedFromSdk, certificate: signed.certificate },
    };
  } finally {
    await check.close();
  }
}
