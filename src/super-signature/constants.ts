// Constants shared by the super-signature modules.

/**
 * The App ID every super profile is made for: the team's wildcard "*". Explicit App IDs are
 * unique across all Apple teams (another team or the App Store may own the app's id) and an app
 * extension would need its own App ID and profile (distribution-protocols.md §3.2.3, §3.4 items
 * 11-12); a wildcard covers the app and its extensions in one profile per account, as ipashare and
 * ami1231 do. The cost: capabilities that need an explicit App ID (push, app groups, associated
 * domains) are not granted, and the re-signer leaves those entitlements out.
 */
export const SUPER_APP_ID = '*';
export const SUPER_APP_ID_NAME = 'Signet Wildcard';
