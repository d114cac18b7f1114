// Constants shared by the super-signature modules.

/**
 * The App ID of apps that need no capability: the team's wildcard "*", one profile per account
 * covering the app and its extensions, as ipashare and ami1231 do. Apps whose entitlements need
 * capabilities (push, associated domains, app groups…) get an explicit App ID per bundle instead,
 * with those capabilities enabled (capability-plan.ts). Explicit App IDs are unique across all
 * Apple teams: one another team owns cannot be used (distribution-protocols.md §3.2.3, §3.4
 * items 11-12).
 */
export const SUPER_APP_ID = '*';
export const SUPER_APP_ID_NAME = 'Signet Wildcard';
