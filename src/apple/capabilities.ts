// Which App Store Connect capability grants which entitlement. An explicit App ID only gets an
// entitlement into its profiles once the matching capability is enabled on it
// (POST /v1/bundleIdCapabilities). Sources:
// - the capability types: Apple, App Store Connect API, "CapabilityType"
//   (https://developer.apple.com/documentation/appstoreconnectapi/capabilitytype), i.e. the
//   `CapabilityType` enum of the App Store Connect OpenAPI document 3.7.0; a type that is not
//   in that enum is never sent (Apple answers 409 to an unknown one);
// - the settings: "CapabilitySetting" / "CapabilityOption" in the same document (the only
//   settings keys are ICLOUD_VERSION, DATA_PROTECTION_PERMISSION_LEVEL, APPLE_ID_AUTH_APP_CONSENT);
// - the entitlement keys: Apple, "Entitlements"
//   (https://developer.apple.com/documentation/bundleresources/entitlements), one page per key.
// Some entitlements name identifiers that must exist in the team and be attached to the App ID
// in the developer portal: app groups, iCloud containers, merchant ids, pass type ids. The API
// (3.7.0) has no resource to create or attach them, so such values cannot be carried to another
// team; the one exception is the team-wide pass type wildcard "TEAMID.*", which enabling Wallet
// grants by itself.

/** The `CapabilityType` values of App Store Connect API 3.7.0. */
export const CAPABILITY_TYPES = [
  'ICLOUD',
  'IN_APP_PURCHASE',
  'GAME_CENTER',
  'PUSH_NOTIFICATIONS',
  'WALLET',
  'INTER_APP_AUDIO',
  'MAPS',
  'ASSOCIATED_DOMAINS',
  'PERSONAL_VPN',
  'APP_GROUPS',
  'HEALTHKIT',
  'HOMEKIT',
  'WIRELESS_ACCESSORY_CONFIGURATION',
  'APPLE_PAY',
  'DATA_PROTECTION',
  'SIRIKIT',
  'NETWORK_EXTENSIONS',
  'MULTIPATH',
  'HOT_SPOT',
  'NFC_TAG_READING',
  'CLASSKIT',
  'AUTOFILL_CREDENTIAL_PROVIDER',
  'ACCESS_WIFI_INFORMATION',
  'NETWORK_CUSTOM_PROTOCOL',
  'COREMEDIA_HLS_LOW_LATENCY',
  'SYSTEM_EXTENSION_INSTALL',
  'USER_MANAGEMENT',
  'APPLE_ID_AUTH',
] as const;

export type CapabilityType = (typeof CAPABILITY_TYPES)[number];

/** A capability setting as POST /v1/bundleIdCapabilities takes it (CapabilitySetting). */
export interface CapabilitySetting {
  key: 'ICLOUD_VERSION' | 'DATA_PROTECTION_PERMISSION_LEVEL' | 'APPLE_ID_AUTH_APP_CONSENT';
  options: Array<{ key: string; enabled: true }>;
}

export interface CapabilityRequest {
  capabilityType: CapabilityType;
  settings: CapabilitySetting[];
}

/** What kind of team-owned identifiers an entitlement's values are (see the file comment). */
export type IdentifierKind = 'app group ids' | 'iCloud containers' | 'merchant ids' | 'pass type ids';

export interface EntitlementCapability {
  capability: CapabilityType;
  /** Set when the values name identifiers the API cannot create. */
  identifiers?: IdentifierKind;
}

// Entitlement key → the capability that grants it (Apple's "Entitlements" pages name the
// capability each key belongs to).
const BY_ENTITLEMENT: Record<string, EntitlementCapability> = {
  'aps-environment': { capability: 'PUSH_NOTIFICATIONS' },
  'com.apple.developer.associated-domains': { capability: 'ASSOCIATED_DOMAINS' },
  'com.apple.security.application-groups': { capability: 'APP_GROUPS', identifiers: 'app group ids' },
  'com.apple.developer.healthkit': { capability: 'HEALTHKIT' },
  'com.apple.developer.healthkit.access': { capability: 'HEALTHKIT' },
  'com.apple.developer.healthkit.background-delivery': { capability: 'HEALTHKIT' },
  'com.apple.developer.homekit': { capability: 'HOMEKIT' },
  'com.apple.developer.siri': { capability: 'SIRIKIT' },
  'com.apple.developer.nfc.readersession.formats': { capability: 'NFC_TAG_READING' },
  'com.apple.developer.default-data-protection': { capability: 'DATA_PROTECTION' },
  'com.apple.developer.networking.networkextension': { capability: 'NETWORK_EXTENSIONS' },
  'com.apple.developer.networking.vpn.api': { capability: 'PERSONAL_VPN' },
  'com.apple.developer.networking.multipath': { capability: 'MULTIPATH' },
  'com.apple.developer.networking.HotspotConfiguration': { capability: 'HOT_SPOT' },
  'com.apple.developer.networking.wifi-info': { capability: 'ACCESS_WIFI_INFORMATION' },
  'com.apple.developer.networking.custom-protocol': { capability: 'NETWORK_CUSTOM_PROTOCOL' },
  'com.apple.external-accessory.wireless-configuration': { capability: 'WIRELESS_ACCESSORY_CONFIGURATION' },
  'inter-app-audio': { capability: 'INTER_APP_AUDIO' },
  'com.apple.developer.pass-type-identifiers': { capability: 'WALLET', identifiers: 'pass type ids' },
  'com.apple.developer.in-app-payments': { capability: 'APPLE_PAY', identifiers: 'merchant ids' },
  'com.apple.developer.game-center': { capability: 'GAME_CENTER' },
  'com.apple.developer.ClassKit-environment': { capability: 'CLASSKIT' },
  'com.apple.developer.authentication-services.autofill-credential-provider': { capability: 'AUTOFILL_CREDENTIAL_PROVIDER' },
  'com.apple.developer.coremedia.hls.low-latency': { capability: 'COREMEDIA_HLS_LOW_LATENCY' },
  'com.apple.developer.applesignin': { capability: 'APPLE_ID_AUTH' },
  // iCloud: key-value storage needs only the capability; documents and CloudKit name containers.
  'com.apple.developer.ubiquity-kvstore-identifier': { capability: 'ICLOUD' },
  'com.apple.developer.icloud-services': { capability: 'ICLOUD' },
  'com.apple.developer.icloud-container-environment': { capability: 'ICLOUD' },
  'com.apple.developer.icloud-container-identifiers': { capability: 'ICLOUD', identifiers: 'iCloud containers' },
  'com.apple.developer.ubiquity-container-identifiers': { capability: 'ICLOUD', identifiers: 'iCloud containers' },
  'com.apple.developer.icloud-container-development-container-identifiers': { capability: 'ICLOUD', identifiers: 'iCloud containers' },
};

/**
 * Entitlements no capability is needed for: the profile's identity, derived for each bundle
 * from its own profile (application-identifier, team, debugging, keychain groups).
 */
export const IDENTITY_ENTITLEMENTS: ReadonlySet<string> = new Set([
  'application-identifier',
  'com.apple.developer.team-identifier',
  'get-task-allow',
  'keychain-access-groups',
]);

/** The capability granting `key`, or undefined when no capability of the API does. */
export function capabilityForEntitlement(key: string): EntitlementCapability | undefined {
  return Object.hasOwn(BY_ENTITLEMENT, key) ? BY_ENTITLEMENT[key] : undefined;
}

// "Data Protection" entitlement values → DATA_PROTECTION_PERMISSION_LEVEL options (CapabilityOption keys).
const PROTECTION_LEVELS: Record<string, string> = {
  NSFileProtectionComplete: 'COMPLETE_PROTECTION',
  NSFileProtectionCompleteUnlessOpen: 'PROTECTED_UNLESS_OPEN',
  NSFileProtectionCompleteUntilFirstUserAuthentication: 'PROTECTED_UNTIL_FIRST_USER_AUTH',
};

/**
 * The settings a capability is enabled with. iCloud is enabled in its current form (Xcode 6 and
 * later: CloudKit and key-value storage); data protection at the level the app asks for (the
 * `com.apple.developer.default-data-protection` value); Sign in with Apple as a primary app.
 */
export function capabilitySettings(capability: CapabilityType, entitlements: ReadonlyMap<string, unknown>): CapabilitySetting[] {
  switch (capability) {
    case 'ICLOUD':
      return [{ key: 'ICLOUD_VERSION', options: [{ key: 'XCODE_6', enabled: true }] }];
    case 'DATA_PROTECTION': {
      const value = entitlements.get('com.apple.developer.default-data-protection');
      const level = typeof value === 'string' ? PROTECTION_LEVELS[value] : undefined;
      return [{ key: 'DATA_PROTECTION_PERMISSION_LEVEL', options: [{ key: level ?? 'COMPLETE_PROTECTION', enabled: true }] }];
    }
    case 'APPLE_ID_AUTH':
      return [{ key: 'APPLE_ID_AUTH_APP_CONSENT', options: [{ key: 'PRIMARY_APP_CONSENT', enabled: true }] }];
    default:
      return [];
  }
}

/** The data-protection values the API can set (the others are left out). */
export function isKnownProtectionLevel(value: string): boolean {
  return Object.hasOwn(PROTECTION_LEVELS, value);
}
