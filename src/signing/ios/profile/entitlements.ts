// Entitlements for one bundle, derived from its profile and (when the app was signed before) its
// original entitlements. Rules: ios-signing.md §13 (Xcode semantics as fastlane's resign.sh
// applies them), replacing zsign's "copy the profile's entitlements verbatim" (§14 row 2), which
// ships wildcard app ids ("TEAM.*") and gives every extension the app's entitlements.
import { SigningError } from '../../errors.ts';
import { plistArray, plistBoolean, plistClone, plistEqual, plistString, type PlistDict, type PlistValue } from '../../plist/index.ts';
import { appIdPatternMatches, profileCoversBundleId } from './checks.ts';
import type { ProvisioningProfile } from './types.ts';

export interface DeriveEntitlementsInput {
  profile: ProvisioningProfile;
  /** The bundle's (possibly renamed) CFBundleIdentifier. */
  bundleId: string;
  /** Entitlements of the bundle's previous signature (slot 5), when it had one. */
  original?: PlistDict;
}

export type DropReason =
  | 'not_granted' // the profile has no such entitlement
  | 'value_not_granted' // the profile has it, but not with this value
  | 'needs_app_value'; // the profile grants "*" and no original value exists to pick from

export interface DerivedEntitlements {
  entitlements: PlistDict;
  /** What was left out, for the task log: installd rejects entitlements a profile does not grant. */
  dropped: { key: string; reason: DropReason }[];
}

const APP_ID = 'application-identifier';
const TEAM_ID = 'com.apple.developer.team-identifier';
const GET_TASK_ALLOW = 'get-task-allow';
const KEYCHAIN = 'keychain-access-groups';
const APS = 'aps-environment';
const ICLOUD_ENV = 'com.apple.developer.icloud-container-environment';
const HANDLED = new Set([APP_ID, TEAM_ID, GET_TASK_ALLOW, KEYCHAIN, APS, ICLOUD_ENV]);

export function deriveEntitlements(input: DeriveEntitlementsInput): DerivedEntitlements {
  const { profile, bundleId } = input;
  if (!profileCoversBundleId(profile, bundleId)) {
    throw new SigningError('bundle_id_mismatch', `Profile "${profile.name}" (${profile.applicationIdentifier}) does not cover bundle id "${bundleId}".`, {
      details: { bundleId, applicationIdentifier: profile.applicationIdentifier },
    });
  }
  const granted = profile.entitlements.value;
  const original = input.original?.value;
  const prefix = profile.appIdPrefix;
  const appId = `${prefix}.${bundleId}`;
  const out = new Map<string, PlistValue>();
  const dropped: DerivedEntitlements['dropped'] = [];
  const rewrite = identityRewriter(input.original, profile.appIdPrefix, bundleId);

  // §13.1–3: identity keys come from the profile, never from the old signature.
  out.set(APP_ID, plistString(appId));
  out.set(TEAM_ID, plistString(profile.teamId));
  const getTaskAllow = granted.get(GET_TASK_ALLOW);
  out.set(GET_TASK_ALLOW, plistBoolean(getTaskAllow?.type === 'boolean' && getTaskAllow.value));

  // §13.4: keychain groups re-prefixed, filtered by the profile's patterns; never the literal "A.*".
  const grantedGroups = granted.get(KEYCHAIN);
  const originalGroups = original?.get(KEYCHAIN);
  if (grantedGroups !== undefined) {
    const candidates = originalGroups?.type === 'array' ? originalGroups.value.map(rewrite) : [plistString(appId)];
    const kept = candidates.filter((group) => grants(grantedGroups, group));
    if (originalGroups !== undefined && kept.length < candidates.length) dropped.push({ key: KEYCHAIN, reason: 'value_not_granted' });
    if (kept.length === 0 && grants(grantedGroups, plistString(appId))) kept.push(plistString(appId));
    if (kept.length > 0) out.set(KEYCHAIN, plistArray(kept));
  } else if (originalGroups !== undefined) {
    dropped.push({ key: KEYCHAIN, reason: 'not_granted' });
  }

  // Push: the environment is the profile's (development or production), whatever the app had.
  const aps = granted.get(APS);
  if (aps !== undefined && (original === undefined || original.has(APS))) out.set(APS, plistClone(aps));
  else if (original?.has(APS)) dropped.push({ key: APS, reason: 'not_granted' });

  // §13.5 (fastlane): profiles list both iCloud environments; an app must carry one string —
  // Production for distribution profiles, Development for development ones.
  const icloudEnv = granted.get(ICLOUD_ENV);
  const originalEnv = original?.get(ICLOUD_ENV);
  if (originalEnv !== undefined && icloudEnv !== undefined && grants(icloudEnv, originalEnv)) out.set(ICLOUD_ENV, plistClone(originalEnv));
  else if (icloudEnv !== undefined && (original === undefined || originalEnv !== undefined)) {
    const chosen = pickIcloudEnvironment(icloudEnv, profile.type === 'development' ? 'Development' : 'Production');
    if (chosen !== undefined) out.set(ICLOUD_ENV, plistString(chosen));
  } else if (originalEnv !== undefined) dropped.push({ key: ICLOUD_ENV, reason: 'not_granted' });

  if (original !== undefined) {
    // §13.5: every other original key survives only if the profile grants its (re-prefixed) value.
    for (const [key, value] of original) {
      if (HANDLED.has(key)) continue;
      const grant = granted.get(key);
      const mapped = rewrite(value);
      if (grant === undefined) dropped.push({ key, reason: 'not_granted' });
      else if (!grants(grant, mapped)) dropped.push({ key, reason: 'value_not_granted' });
      else out.set(key, mapped);
    }
  } else {
    // §13.6: no original entitlements — start from the profile with wildcards resolved.
    for (const [key, value] of granted) {
      if (HANDLED.has(key)) continue;
      if (value.type === 'string' && value.value === '*') dropped.push({ key, reason: 'needs_app_value' });
      else if (value.type === 'string' && (value.value === `${prefix}.*` || value.value === `${profile.teamId}.*`)) out.set(key, plistString(appId));
      else out.set(key, plistClone(value));
    }
  }
  return { entitlements: { type: 'dict', value: out }, dropped };
}

/**
 * Maps the old signature's identity onto the new one inside string values: "OLDPREFIX.x" →
 * "PREFIX.x", and the old bundle id right after the prefix → the new bundle id. Values without
 * the old prefix (app groups, iCloud containers, merchant ids) are left alone: they only stay if
 * the new profile lists them, i.e. they transfer within the same team only (§13.5).
 */
function identityRewriter(original: PlistDict | undefined, newPrefix: string, bundleId: string): (value: PlistValue) => PlistValue {
  const oldAppId = original?.value.get(APP_ID);
  const oldTeam = original?.value.get(TEAM_ID);
  const oldPrefixes: string[] = [];
  let oldBundleId: string | undefined;
  if (oldAppId?.type === 'string' && oldAppId.value.includes('.')) {
    const dot = oldAppId.value.indexOf('.');
    oldPrefixes.push(oldAppId.value.slice(0, dot));
    oldBundleId = oldAppId.value.slice(dot + 1);
  }
  if (oldTeam?.type === 'string' && oldTeam.value !== '' && !oldPrefixes.includes(oldTeam.value)) oldPrefixes.push(oldTeam.value);
  const rewriteString = (text: string): string => {
    const old = oldPrefixes.find((p) => text.startsWith(`${p}.`));
    if (old === undefined) return text;
    let rest = text.slice(old.length + 1);
    if (oldBundleId !== undefined && (rest === oldBundleId || rest.startsWith(`${oldBundleId}.`))) rest = bundleId + rest.slice(oldBundleId.length);
    return `${newPrefix}.${rest}`;
  };
  const rewrite = (value: PlistValue): PlistValue => {
    if (value.type === 'string') return plistString(rewriteString(value.value));
    if (value.type === 'array') return plistArray(value.value.map(rewrite));
    return plistClone(value);
  };
  return rewrite;
}

/**
 * The original entitlements as they read once moved to another App ID prefix and bundle id,
 * with the identity rewriting `deriveEntitlements` applies ("OLDTEAM.x" → "PREFIX.x"), before
 * any profile filters them. For building a profile that grants exactly what an app carries over.
 */
export function transferEntitlements(original: PlistDict, prefix: string, bundleId: string): PlistDict {
  const rewrite = identityRewriter(original, prefix, bundleId);
  return { type: 'dict', value: new Map([...original.value].map(([key, value]) => [key, rewrite(value)])) };
}

/** Does the profile's entitlement value `grant` allow the app value `value`? */
export function grants(grant: PlistValue, value: PlistValue): boolean {
  switch (grant.type) {
    case 'string':
      if (grant.value === '*') return true;
      if (value.type === 'string') return appIdPatternMatches(grant.value, value.value) || grant.value === value.value;
      if (value.type === 'array') return value.value.every((item) => item.type === 'string' && grants(grant, item));
      return false;
    case 'array':
      if (value.type === 'array') return value.value.every((item) => grant.value.some((g) => grants(g, item)));
      return grant.value.some((g) => grants(g, value));
    case 'boolean':
      // A capability granted as true may be used or not; one granted as false may not be enabled.
      return value.type === 'boolean' && (grant.value || !value.value);
    case 'dict':
      if (value.type !== 'dict') return false;
      for (const [key, item] of value.value) {
        const sub = grant.value.get(key);
        if (sub === undefined || !grants(sub, item)) return false;
      }
      return true;
    default:
      return plistEqual(grant, value);
  }
}

function pickIcloudEnvironment(grant: PlistValue, preferred: string): string | undefined {
  if (grant.type === 'string') return grant.value;
  if (grant.type !== 'array') return undefined;
  const names = grant.value.filter((v) => v.type === 'string').map((v) => (v as { value: string }).value);
  return names.includes(preferred) ? preferred : names[0];
}
