// The App Store Connect resources Signet uses, as decoded from the API (JSON:API, spec 3.7.0
// subset in shared/asc-openapi). Enumerations Apple is known to extend are open strings
// (distribution-protocols.md §3.2.3: device status has PROCESSING and INELIGIBLE beyond the spec).

export type DeviceClass = 'IPHONE' | 'IPAD' | 'IPOD' | 'APPLE_WATCH' | 'APPLE_TV' | 'MAC' | (string & {});
/** ENABLED | DISABLED per the spec; PROCESSING | INELIGIBLE in live traffic. */
export type DeviceStatus = 'ENABLED' | 'DISABLED' | 'PROCESSING' | 'INELIGIBLE' | (string & {});

export interface AscDevice {
  id: string;
  udid: string;
  name: string;
  deviceClass: DeviceClass;
  status: DeviceStatus;
  platform: string;
  model: string | null;
  addedDate: Date | null;
}

export interface AscBundleId {
  id: string;
  identifier: string;
  name: string;
  platform: string;
  seedId: string | null;
}

export interface AscBundleIdCapability {
  /** Apple's id, "<bundle id id>_<CAPABILITY_TYPE>". */
  id: string;
  /** A CapabilityType (capabilities.ts); open, as Apple adds types. */
  capabilityType: string;
  settings: unknown[];
}

export interface AscCertificate {
  id: string;
  certificateType: string;
  displayName: string | null;
  name: string | null;
  /** Upper-case hex without leading zeros stripped (as Apple sends it, normalised). */
  serialNumber: string;
  expirationDate: Date | null;
  /** DER. */
  content: Buffer | null;
}

export interface AscProfile {
  id: string;
  name: string;
  profileType: string;
  profileState: string;
  uuid: string;
  /** The .mobileprovision bytes (profileContent, base64-decoded). */
  content: Buffer;
  expirationDate: Date | null;
}

/** The distribution certificate types an ad-hoc profile accepts (§3.2.3). */
export const DISTRIBUTION_CERTIFICATE_TYPES = ['IOS_DISTRIBUTION', 'DISTRIBUTION'] as const;

/** Device slots per device class per membership year (§3.2.5). */
export const DEVICE_SLOTS_PER_CLASS = 100;
