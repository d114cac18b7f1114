// The Signer for Android APKs with the account's own ("enterprise") key: loads the identity from
// the stored credential, re-signs v1+v2+v3 with apksigner's defaults, then verifies the output
// with Signet's own verifier before anything leaves (no unverified artifact is ever handed out).
// Engine failures keep their catalogue codes (keystore_password_incorrect, apk_invalid, ...),
// which the worker writes to task.error.code.
import { rm } from 'node:fs/promises';
import { AppError } from '../../errors.ts';
import { signApk, v1SignerNameFor, verifyApk, type SignApkResult } from '../../signing/android/index.ts';
import { loadIdentity, type Identity } from '../../signing/cms/index.ts';
import { FileSink } from '../../signing/data-sink.ts';
import { FileSource } from '../../signing/data-source.ts';
import { inspectPackage } from '../../signing/inspect/index.ts';
import type { Credential } from '../../db/credential.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../signer.ts';

// API 24: the first platform that reads v2; below it only v1 protects the APK.
const FIRST_V2_SDK = 24;

export class AndroidSigner implements Signer {
  readonly platform: Platform = 'android';
  readonly certTypes: readonly CertType[] = ['enterprise'];

  async sign(request: SignRequest): Promise<SignResult> {
    const { credential, signal } = request;
    if (credential.kind !== 'android') throw new AppError('cert_type_unsupported', 'An Android task needs an Android signing key.');
    const identity = await loadCredential(credential);
    signal.throwIfAborted();
    const signed = await signFile(request, identity, credential.alias);
    signal.throwIfAborted();
    const verification = await verifyOutput(request.outputPath, signed);
    const app = await describeApp(request.outputPath);
    return { app, verification };
  }
}

async function signFile(request: SignRequest, identity: Identity, alias: string | null): Promise<SignApkResult> {
  const source = await FileSource.open(request.inputPath);
  try {
    const sink = await FileSink.create(request.outputPath);
    try {
      return await signApk(source, sink, {
        identity,
        // apksigner: the keystore alias names the v1 signature files (no key file name here).
        v1SignerName: v1SignerNameFor(identity.alias ?? alias ?? undefined, undefined),
        signal: request.signal,
      });
    } finally {
      await sink.close();
    }
  } catch (error) {
    await rm(request.outputPath, { force: true });
    throw error;
  } finally {
    await source.close();
  }
}

async function loadCredential(credential: Extract<Credential, { kind: 'android' }>): Promise<Identity> {
  return loadIdentity(credential.keystore, {
    ...(credential.password === null ? {} : { password: credential.password }),
    ...(credential.keyPassword === null ? {} : { keyPassword: credential.keyPassword }),
    ...(credential.alias === null ? {} : { alias: credential.alias }),
    ...(credential.certificate === null ? {} : { certificate: credential.certificate }),
  });
}

/** Runs the verifier over the platform range the output serves; refuses to hand out a failure. */
async function verifyOutput(path: string, signed: SignApkResult): Promise<string[]> {
  const minSdk = signed.schemes.v1 ? signed.minSdk : Math.max(signed.minSdk, FIRST_V2_SDK);
  const source = await FileSource.open(path);
  try {
    const report = await verifyApk(source, { minSdk, written: signed.written });
    if (!report.verified) {
      throw new AppError('verification_failed', `The signed APK did not verify: ${report.errors.map((e) => e.message).join('; ')}`, {
        details: { errors: report.errors },
      });
    }
    const verified: string[] = (['v1', 'v2', 'v3', 'v3.1'] as const).filter((scheme) => report.schemes[scheme].verified);
    // Android ignores certificate validity, so an expired key still signs; the task says so.
    const expired = report.signers.find((s) => s.expired);
    if (expired !== undefined) verified.push(`certificate expired on ${expired.notAfter.slice(0, 10)} (accepted: Android does not check validity)`);
    return verified;
  } finally {
    await source.close();
  }
}

async function describeApp(path: string): Promise<SignResult['app']> {
  const source = await FileSource.open(path);
  try {
    const info = await inspectPackage(source, { iconBytes: false });
    return { bundleId: info.bundleId, name: info.name, version: info.version, build: info.build };
  } finally {
    await source.close();
  }
}
