// The production signers and the provisioning-profile reader. Signing runs on the SignerPool's
// worker threads (engines load there on first use); a platform missing here fails its tasks with
// `signer_unavailable`, never with a fake success. Super signing is wired in service.ts.
import type { ProfileReader } from '../services/certificates.ts';
import type { Signer } from '../services/signer.ts';
import type { RunSignPackage } from '../services/signer-pool.ts';
import { EnterpriseSigner } from '../services/signers/enterprise.ts';

/** The enterprise signers, each running the signing pipeline through `run` (the SignerPool's threads). */
export function productionSigners(run: RunSignPackage): Signer[] {
  return [new EnterpriseSigner('android', run), new EnterpriseSigner('ios', run)];
}

/** Reads an uploaded .mobileprovision (the parser loads on first use). */
export function productionProfileReader(): ProfileReader {
  return async (bytes) => {
    const [{ parseProvisioningProfile }, { plistToJs }] = await Promise.all([import('../signing/ios/profile/index.ts'), import('../signing/plist/index.ts')]);
    const profile = parseProvisioningProfile(bytes);
    const entitlements = plainJson(plistToJs(profile.entitlements));
    return {
      name: profile.name,
      uuid: profile.uuid,
      entitlements,
      appId: profile.applicationIdentifier,
      type: profile.type,
      expiresAt: profile.expiresAt,
      teamId: profile.teamId,
      certificates: profile.developerCertificates,
    };
  };
}

/** JSON for API answers: data as base64, dates as ISO strings, big integers as strings. */
function plainJson(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(plainJson);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainJson(v)]));
  return value;
}
