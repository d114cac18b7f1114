// The DeviceBuildSigner backed by the iOS re-signer (src/signing/ios/resign, through the iOS
// task signer's resignIpaFile: re-sign into a partial file, verify with `signet verify`'s checks,
// rename). Every device build is a whole-app re-sign of the task's upload for the device's ad-hoc
// profiles (one per App ID: each bundle takes the one covering it); a super task's prepared
// build is the same re-sign with one template profile per App ID (template-profile.ts). Apple's .p12 exports carry no intermediates, so the chain is completed
// from SIGNET_APPLE_CA_DIR. Engines load on first use.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Identity } from '../signing/cms/index.ts';
import type { ProvisioningProfile } from '../signing/ios/profile/index.ts';
import type { DeviceBuildRequest, DeviceBuildResult, DeviceBuildSigner, PrepareRequest, PrepareResult } from './device-signer.ts';

export interface ResigningDeviceSignerOptions {
  /** SIGNET_APPLE_CA_DIR: Apple WWDR intermediates and roots (DER or PEM) completing p12 chains. */
  appleCaDir?: string | null;
  /** Mach-O signing threads per build (the re-signer's pool; 0 = in-process). */
  workers?: number;
  /** Opens the developer account's .p12 (default: the engine's loadIdentity on this thread). */
  loadIdentity?: (p12: Buffer, options: { password: string }) => Promise<Identity>;
}

export function resigningDeviceSigner(options: ResigningDeviceSignerOptions = {}): DeviceBuildSigner {
  let caCertificates: Promise<Buffer[]> | null = null;

  const identityOf = async (p12: Buffer, password: string): Promise<Identity> => {
    const { loadIdentity, completeAppleChain, parseCertificateBundle } = await import('../signing/cms/index.ts');
    caCertificates ??= loadCaDirectory(options.appleCaDir ?? null, parseCertificateBundle);
    const identity = await (options.loadIdentity ?? loadIdentity)(p12, { password });
    return completeAppleChain(identity, { caCertificates: await caCertificates });
  };

  const resign = async (inputPath: string, outputPath: string, identity: Identity, profiles: ProvisioningProfile[], signal?: AbortSignal) => {
    const { resignIpaFile, asVerificationFailure } = await import('../services/signers/ios.ts');
    try {
      return await resignIpaFile(inputPath, outputPath, { identity, profiles, ...(options.workers === undefined ? {} : { workers: options.workers }), ...(signal ? { signal } : {}) });
    } catch (error) {
      throw asVerificationFailure(error);
    }
  };

  return {
    async sign(request: DeviceBuildRequest): Promise<DeviceBuildResult> {
      const { parseProvisioningProfile } = await import('../signing/ios/profile/index.ts');
      const identity = await identityOf(request.p12, request.password);
      const { verification } = await resign(request.inputPath, request.outputPath, identity, request.profiles.map((p) => parseProvisioningProfile(p)), request.signal);
      return { mode: 'full', verification: verification.bundles.map((b) => `${b.path || 'app'}: verified`) };
    },

    identity: identityOf,

    async prepare(request: PrepareRequest): Promise<PrepareResult> {
      const { parseProvisioningProfile } = await import('../signing/ios/profile/index.ts');
      const { templateProfiles } = await import('./template-profile.ts');
      const identity = await identityOf(request.p12, request.password);
      const templates = templateProfiles({ identity, teamId: request.teamId, teamName: request.teamName, plan: request.plan });
      const { result } = await resign(request.inputPath, request.outputPath, identity, templates.map((t) => parseProvisioningProfile(t)), request.signal);
      return {
        app: result.app,
        verification: [`prepared: ${result.bundles.length} bundle(s) signed for team ${request.teamId} with ${templates.length} template profile(s); each device gets its own build`],
      };
    },
  };
}

async function loadCaDirectory(dir: string | null, parse: (bytes: Buffer) => Buffer[]): Promise<Buffer[]> {
  if (dir === null) return [];
  const names = await readdir(dir);
  const files = await Promise.all(names.map((name) => readFile(path.join(dir, name)).catch(() => null)));
  return files.flatMap((bytes) => (bytes === null ? [] : parse(bytes)));
}
