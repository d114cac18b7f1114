// Can this profile sign this bundle with this certificate? The checks installd makes at install
// time (ios-signing.md §2 step 2, §17 row 0xe8008015), made before signing so a bad combination
// fails fast with its own error code instead of producing an uninstallable app.
import { X509Certificate } from 'node:crypto';
import { SigningError } from '../../errors.ts';
import type { ProvisioningProfile } from './types.ts';

/**
 * Apple app-id wildcards are suffix-only: "*" covers every bundle id, "com.example.*" covers
 * ids that start with "com.example."; anything else must match exactly.
 */
export function appIdPatternMatches(pattern: string, bundleId: string): boolean {
  if (pattern === '*') return bundleId.length > 0;
  if (pattern.endsWith('*')) return bundleId.startsWith(pattern.slice(0, -1)) && bundleId.length > pattern.length - 1;
  return pattern === bundleId;
}

export function profileCoversBundleId(profile: ProvisioningProfile, bundleId: string): boolean {
  return appIdPatternMatches(profile.bundleIdPattern, bundleId);
}

/**
 * Picks the profile for a bundle among several (app + one per extension): an exact app id wins,
 * then the longest wildcard prefix, so "com.x.app.widget" takes its own profile over "com.x.*".
 * Between profiles of the same App ID (a renewed profile beside the old one), one valid at `now`
 * wins over an expired one, then the one that expires last.
 */
export function selectProfileForBundle(profiles: readonly ProvisioningProfile[], bundleId: string, now: Date = new Date()): ProvisioningProfile | undefined {
  let best: ProvisioningProfile | undefined;
  let bestRank: [number, number, number] = [-1, -1, -1];
  for (const profile of profiles) {
    if (!profileCoversBundleId(profile, bundleId)) continue;
    const pattern = profile.bundleIdPattern;
    const rank: [number, number, number] = [
      pattern.endsWith('*') ? pattern.length - 1 : Number.MAX_SAFE_INTEGER,
      profile.expiresAt.getTime() >= now.getTime() ? 1 : 0,
      profile.expiresAt.getTime(),
    ];
    if (rank[0] > bestRank[0] || (rank[0] === bestRank[0] && (rank[1] > bestRank[1] || (rank[1] === bestRank[1] && rank[2] > bestRank[2])))) {
      best = profile;
      bestRank = rank;
    }
  }
  return best;
}

export interface ProfileCheckInput {
  bundleId: string;
  /** The signing certificate (the p12 leaf), DER. */
  certificate: Buffer;
  /** Defaults to now; injectable so the checks are testable. */
  now?: Date;
}

/**
 * Throws the first failing check's code: bundle_id_mismatch, profile_expired,
 * profile_certificate_mismatch, certificate_expired (or certificate_invalid).
 */
export function checkProfileForSigning(profile: ProvisioningProfile, input: ProfileCheckInput): void {
  const now = input.now ?? new Date();
  if (!profileCoversBundleId(profile, input.bundleId)) {
    throw new SigningError('bundle_id_mismatch', `Profile "${profile.name}" (${profile.applicationIdentifier}) does not cover bundle id "${input.bundleId}".`, {
      details: { bundleId: input.bundleId, applicationIdentifier: profile.applicationIdentifier, profileUuid: profile.uuid },
    });
  }
  if (now.getTime() > profile.expiresAt.getTime()) {
    throw new SigningError('profile_expired', `Profile "${profile.name}" expired on ${profile.expiresAt.toISOString()}.`, {
      details: { expiresAt: profile.expiresAt.toISOString(), profileUuid: profile.uuid },
    });
  }
  // installd compares the leaf byte for byte with DeveloperCertificates (ios-signing.md §11).
  if (!profile.developerCertificates.some((der) => der.equals(input.certificate))) {
    throw new SigningError('profile_certificate_mismatch', `Profile "${profile.name}" does not list the signing certificate among its ${profile.developerCertificates.length} developer certificate(s).`, {
      details: { profileUuid: profile.uuid },
    });
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(input.certificate);
  } catch (cause) {
    throw new SigningError('certificate_invalid', 'The signing certificate cannot be parsed as X.509.', { cause });
  }
  const notAfter = new Date(certificate.validTo);
  const notBefore = new Date(certificate.validFrom);
  if (now.getTime() > notAfter.getTime() || now.getTime() < notBefore.getTime()) {
    throw new SigningError('certificate_expired', `The signing certificate is valid from ${notBefore.toISOString()} to ${notAfter.toISOString()}, not at ${now.toISOString()}.`, {
      details: { notBefore: notBefore.toISOString(), notAfter: notAfter.toISOString() },
    });
  }
}
