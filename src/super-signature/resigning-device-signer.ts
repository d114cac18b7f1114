// The DeviceBuildSigner backed by the one signing pipeline (src/signing/pipeline: complete the
// chain, re-sign, verify, rename into place). Every device build is a whole-app re-sign of the
// task's upload for the device's ad-hoc profiles (one per App ID: each bundle takes the one
// covering it); a super task's prepared build is the same re-sign with one template profile per
// App ID (template-profile.ts). Apple's .p12 exports often carry no intermediates: the pipeline
// completes the chain from Apple's CAs shipped with Signet plus SIGNET_APPLE_CA_DIR (`settings`).
// Engines load on first use.
import type { Identity, LoadIdentityOptions } from '../signing/cms/index.ts';
import type { SignEnv, SigningSettings } from '../signing/pipeline/types.ts';
import type { DeviceBuildRequest, DeviceBuildResult, DeviceBuildSigner, PrepareRequest, PrepareResult } from './device-signer.ts';

export interface ResigningDeviceSignerOptions {
  /** CA certificates (SIGNET_APPLE_CA_DIR's files) and limits; machOThreads: threads per build (0 = in-process). */
  settings?: SigningSettings;
  /** Opens the developer account's .p12 (default: the engine's loadIdentity on this thread). */
  loadIdentity?: (p12: Buffer, options: LoadIdentityOptions) => Promise<Identity>;
}

export function resigningDeviceSigner(options: ResigningDeviceSignerOptions = {}): DeviceBuildSigner {
  const env = (signal?: AbortSignal): SignEnv => ({
    ...options.settings,
    ...(options.loadIdentity ? { loadIdentity: options.loadIdentity } : {}),
    ...(signal ? { signal } : {}),
  });
  const pipeline = () => import('../signing/pipeline/index.ts');

  return {
    async sign(request: DeviceBuildRequest): Promise<DeviceBuildResult> {
      const { signPackageToFile } = await pipeline();
      const summary = await signPackageToFile(
        { platform: 'ios', identity: { p12: request.p12, password: request.password }, profiles: request.profiles.map((bytes) => ({ id: null, bytes })) },
        request.input,
        request.outputPath,
        env(request.signal),
      );
      return { mode: 'full', verification: summary.verification };
    },

    identity: async (p12, password) => (await pipeline()).openSigningIdentity({ p12, password }, env()),

    async prepare(request: PrepareRequest): Promise<PrepareResult> {
      const { openSigningIdentity, signPackageToFile } = await pipeline();
      const { templateProfiles } = await import('./template-profile.ts');
      // The template profiles name the identity's certificate, so it is opened first.
      const identity = await openSigningIdentity({ p12: request.p12, password: request.password }, env());
      const templates = templateProfiles({ identity, teamId: request.teamId, teamName: request.teamName, plan: request.plan });
      const summary = await signPackageToFile(
        { platform: 'ios', identity: { opened: identity }, profiles: templates.map((bytes) => ({ id: null, bytes })) },
        request.input,
        request.outputPath,
        env(request.signal),
      );
      return {
        app: summary.app,
        verification: [`prepared: ${summary.ios?.bundles.length ?? 0} bundle(s) signed for team ${request.teamId} with ${templates.length} template profile(s); each device gets its own build`],
      };
    },
  };
}
