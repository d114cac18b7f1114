// What Signet knows about a provisioning profile (.mobileprovision) once parsed
// (ios-signing.md §11; distribution-protocols.md on in-house / ad-hoc profiles).
import type { ParsedSignedData } from '../../cms/cms-parse.ts';
import type { PlistDict } from '../../plist/index.ts';

/**
 * How the profile distributes the app:
 * - enterprise: `ProvisionsAllDevices` (In-House, IOS_APP_INHOUSE);
 * - development: `get-task-allow` true (debugger may attach);
 * - ad-hoc: `ProvisionedDevices` listed, `get-task-allow` false;
 * - app-store: neither devices nor all-devices (installs only through Apple).
 */
export type ProfileType = 'enterprise' | 'ad-hoc' | 'development' | 'app-store';

export interface ProvisioningProfile {
  /** The .mobileprovision exactly as given: embedded verbatim as `embedded.mobileprovision`. */
  bytes: Buffer;
  /** The CMS content (the profile plist) and its parsed form. */
  plistBytes: Buffer;
  plist: PlistDict;
  name: string;
  uuid: string;
  appIdName?: string;
  teamId: string;
  teamName?: string;
  /** `ApplicationIdentifierPrefix[0]`: normally equal to the team id. */
  appIdPrefix: string;
  /** `Entitlements["application-identifier"]`, e.g. "ABCDE12345.com.example.*". */
  applicationIdentifier: string;
  /** The part after the prefix: an exact bundle id, "*" or "com.example.*". */
  bundleIdPattern: string;
  type: ProfileType;
  platforms: string[];
  /** Device UDIDs of development/ad-hoc profiles (empty for enterprise and App Store). */
  devices: string[];
  provisionsAllDevices: boolean;
  createdAt: Date;
  expiresAt: Date;
  /** `DeveloperCertificates`: DER of each certificate allowed to sign with this profile. */
  developerCertificates: Buffer[];
  /** The entitlements the profile grants (may hold wildcards such as "TEAM.*"). */
  entitlements: PlistDict;
  /** Every certificate carried by the CMS wrapper (Apple's signer and its CAs), DER. */
  cmsCertificates: Buffer[];
  /** The certificate(s) that signed the CMS, found by each SignerInfo's identifier. */
  signerCertificates: Buffer[];
  /**
   * True only when a `verifyProfileSignature` hook was given and accepted the CMS. Parsing alone
   * does not check Apple's signature (installd does, on the device).
   */
  signatureVerified: boolean;
}

/** What a `verifyProfileSignature` hook receives: the CMS as parsed, with the raw bytes. */
export interface ProfileCms {
  der: Buffer;
  signedData: ParsedSignedData;
  signerCertificates: Buffer[];
}

/**
 * Verifies the profile's CMS signature and chain (e.g. up to Apple's root) and throws
 * `SigningError('cms_invalid' | 'certificate_chain_incomplete', …)` when it does not hold.
 * Supplied by the caller (the CMS engine's verifier); the profile parser never fakes it.
 */
export type VerifyProfileSignature = (cms: ProfileCms) => void;
