// What the App Store Connect fake puts into an ad-hoc profile's Entitlements for each capability
// enabled on its App ID. Written independently of src/apple/capabilities.ts (a shared table would
// make the fake agree with the code under test by construction): the values are those Apple
// granted in the real development profile of fastlane's very-capable-app fixture
// (../shared/fixtures/ios/fastlane/ipas/very-capable-app.ipa, embedded.mobileprovision), with the
// ad-hoc differences Apple documents: aps-environment "production", get-task-allow false.
// Identifiers attached in the developer portal (app groups, iCloud containers, merchant ids)
// are empty lists: the API cannot attach any.
import type { ProfilePlistValue } from './pki.ts';

type Entitlements = { [key: string]: ProfilePlistValue };

const PROTECTION: Record<string, string> = {
  COMPLETE_PROTECTION: 'NSFileProtectionComplete',
  PROTECTED_UNLESS_OPEN: 'NSFileProtectionCompleteUnlessOpen',
  PROTECTED_UNTIL_FIRST_USER_AUTH: 'NSFileProtectionCompleteUntilFirstUserAuthentication',
};

export interface FakeCapability {
  type: string;
  settings: Array<{ key?: string; options?: Array<{ key?: string; enabled?: boolean }> }>;
}

/** Capabilities every new explicit App ID starts with in the portal. */
export const DEFAULT_CAPABILITIES = ['IN_APP_PURCHASE', 'GAME_CENTER'];

export function capabilityEntitlements(capability: FakeCapability, teamId: string): Entitlements {
  switch (capability.type) {
    case 'PUSH_NOTIFICATIONS':
      return { 'aps-environment': 'production' };
    case 'ASSOCIATED_DOMAINS':
      return { 'com.apple.developer.associated-domains': '*' };
    case 'APP_GROUPS':
      return { 'com.apple.security.application-groups': [] };
    case 'HEALTHKIT':
      return { 'com.apple.developer.healthkit': true };
    case 'HOMEKIT':
      return { 'com.apple.developer.homekit': true };
    case 'SIRIKIT':
      return { 'com.apple.developer.siri': true };
    case 'NFC_TAG_READING':
      return { 'com.apple.developer.nfc.readersession.formats': ['NDEF', 'TAG'] };
    case 'DATA_PROTECTION': {
      const level = capability.settings.find((s) => s.key === 'DATA_PROTECTION_PERMISSION_LEVEL')?.options?.find((o) => o.enabled)?.key;
      return { 'com.apple.developer.default-data-protection': PROTECTION[level ?? 'COMPLETE_PROTECTION'] ?? 'NSFileProtectionComplete' };
    }
    case 'NETWORK_EXTENSIONS':
      return { 'com.apple.developer.networking.networkextension': ['app-proxy-provider', 'content-filter-provider', 'packet-tunnel-provider', 'dns-proxy'] };
    case 'PERSONAL_VPN':
      return { 'com.apple.developer.networking.vpn.api': ['allow-vpn'] };
    case 'MULTIPATH':
      return { 'com.apple.developer.networking.multipath': true };
    case 'HOT_SPOT':
      return { 'com.apple.developer.networking.HotspotConfiguration': true };
    case 'ACCESS_WIFI_INFORMATION':
      return { 'com.apple.developer.networking.wifi-info': true };
    case 'WIRELESS_ACCESSORY_CONFIGURATION':
      return { 'com.apple.external-accessory.wireless-configuration': true };
    case 'INTER_APP_AUDIO':
      return { 'inter-app-audio': true };
    case 'WALLET':
      return { 'com.apple.developer.pass-type-identifiers': [`${teamId}.*`] };
    case 'APPLE_PAY':
      return { 'com.apple.developer.in-app-payments': [] };
    case 'ICLOUD':
      return {
        'com.apple.developer.icloud-services': '*',
        'com.apple.developer.icloud-container-environment': ['Development', 'Production'],
        'com.apple.developer.icloud-container-identifiers': [],
        'com.apple.developer.icloud-container-development-container-identifiers': [],
        'com.apple.developer.ubiquity-container-identifiers': [],
        'com.apple.developer.ubiquity-kvstore-identifier': `${teamId}.*`,
      };
    default:
      return {};
  }
}
