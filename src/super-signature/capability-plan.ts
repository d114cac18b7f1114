// What a super-signed app needs from each developer account (issue 20): for every provisioned
// bundle (the app, its extensions, a watch app), the App ID to provision it under and the App
// Store Connect capabilities its entitlements need, and the entitlements that cannot be carried
// over, each with the reason. Computed once per task from the entitlements the app was signed
// with (src/signing/ios/resign readProvisionedBundles) and stored with the task.
//
// - An app that needs no capability keeps the team's wildcard App ID (constants.ts): one
//   profile per account covers the app and its extensions, and nothing is registered per app.
// - Otherwise every provisioned bundle gets an explicit App ID: its own bundle id, registered in
//   the developer account with the capabilities it needs, and an ad-hoc profile of its own.
// - Entitlements no capability of the API grants, and those naming identifiers the API cannot
//   create (app groups, iCloud containers, merchant ids, specific pass type ids), are left out
//   with a warning naming them; the capability itself is still enabled, so identifiers attached
//   later in the developer portal reach the profiles.
import type { TaskWarning } from '../db/schema.ts';
import { capabilityForEntitlement, capabilitySettings, IDENTITY_ENTITLEMENTS, isKnownProtectionLevel, type CapabilityRequest, type CapabilityType } from '../apple/capabilities.ts';
import { plistToJs, writeXmlPlist, type PlistDict, type PlistValue } from '../signing/plist/index.ts';
import type { ProvisionedBundle } from '../signing/ios/resign/index.ts';
import { SUPER_APP_ID } from './constants.ts';

export interface BundlePlan {
  /** Zip path of the bundle ("Payload/A.app/PlugIns/W.appex/"). */
  path: string;
  bundleId: string;
  /** The App ID identifier its profiles are made for: the bundle id, or "*" (wildcard plans). */
  appId: string;
  capabilities: CapabilityRequest[];
  /**
   * The original entitlements the bundle keeps (identity keys included), as an XML plist: the
   * prepared build's template profile grants exactly these, moved to the account's team.
   */
  entitlementsXml: string | null;
}

export interface SuperAppPlan {
  version: 1;
  mode: 'wildcard' | 'explicit';
  /** The app first, then nested bundles (in a wildcard plan all with the App ID "*"). */
  bundles: BundlePlan[];
  leftOut: TaskWarning[];
}

/** The plan of tasks signed before plans existed: the wildcard, nothing carried over. */
export const LEGACY_WILDCARD_PLAN: SuperAppPlan = {
  version: 1,
  mode: 'wildcard',
  bundles: [{ path: '', bundleId: SUPER_APP_ID, appId: SUPER_APP_ID, capabilities: [], entitlementsXml: null }],
  leftOut: [],
};

export function planCapabilities(bundles: readonly ProvisionedBundle[]): SuperAppPlan {
  const leftOut: TaskWarning[] = [];
  const planned = bundles.map((bundle) => planBundle(bundle, leftOut));
  if (planned.some((b) => b.capabilities.length > 0)) return { version: 1, mode: 'explicit', bundles: planned, leftOut };
  // No capability needed: one wildcard profile covers every bundle (identity entitlements come
  // from it); what was left out stays left out (it has no capability to enable).
  return { version: 1, mode: 'wildcard', bundles: planned.map((b) => ({ ...b, appId: SUPER_APP_ID, entitlementsXml: null })), leftOut };
}

/** The App IDs a plan provisions, the app's first (one "*" for a wildcard plan). */
export function appIdsOf(plan: SuperAppPlan): string[] {
  return [...new Set(plan.bundles.map((b) => b.appId))];
}

function planBundle(bundle: ProvisionedBundle, leftOut: TaskWarning[]): BundlePlan {
  const original = bundle.entitlements?.value ?? new Map<string, PlistValue>();
  const oldPrefixes = teamPrefixes(original);
  const kept = new Map<string, PlistValue>();
  const capabilities = new Map<CapabilityType, CapabilityRequest>();
  const values = new Map([...original].map(([key, value]) => [key, plistToJs(value) as unknown]));
  const leave = (key: string, reason: string, message: string) => leftOut.push({ code: 'entitlement_left_out', message: `${key} left out of ${bundle.bundleId}: ${message}`, bundleId: bundle.bundleId, entitlement: key, reason });

  for (const [key, value] of original) {
    if (IDENTITY_ENTITLEMENTS.has(key)) {
      kept.set(key, value);
      continue;
    }
    const rule = capabilityForEntitlement(key);
    if (rule === undefined) {
      leave(key, 'no_capability', 'no App Store Connect capability grants it');
      continue;
    }
    if (key === 'com.apple.developer.default-data-protection' && !(value.type === 'string' && isKnownProtectionLevel(value.value))) {
      leave(key, 'no_capability', `the Data Protection capability has no level for ${JSON.stringify(plistToJs(value))}`);
      continue;
    }
    capabilities.set(rule.capability, { capabilityType: rule.capability, settings: capabilitySettings(rule.capability, values) });
    if (rule.identifiers !== undefined) {
      const missing = identifiersOf(value).filter((id) => !(rule.identifiers === 'pass type ids' && oldPrefixes.some((p) => id === `${p}.*`)));
      if (missing.length > 0) {
        leave(key, 'identifiers_not_creatable', `its ${rule.identifiers} (${missing.join(', ')}) cannot be created through the App Store Connect API`);
        continue;
      }
    }
    kept.set(key, value);
  }
  return {
    path: bundle.path,
    bundleId: bundle.bundleId,
    appId: bundle.bundleId,
    capabilities: [...capabilities.values()],
    entitlementsXml: kept.size === 0 ? null : writeXmlPlist({ type: 'dict', value: kept } satisfies PlistDict).toString('utf8'),
  };
}

/** The old team's prefixes ("ABCDE12345" from "ABCDE12345.com.example.app" and the team id). */
function teamPrefixes(original: ReadonlyMap<string, PlistValue>): string[] {
  const out: string[] = [];
  const appId = original.get('application-identifier');
  if (appId?.type === 'string' && appId.value.includes('.')) out.push(appId.value.slice(0, appId.value.indexOf('.')));
  const team = original.get('com.apple.developer.team-identifier');
  if (team?.type === 'string' && team.value !== '' && !out.includes(team.value)) out.push(team.value);
  return out;
}

function identifiersOf(value: PlistValue): string[] {
  if (value.type === 'string') return [value.value];
  if (value.type === 'array') return value.value.flatMap((item) => (item.type === 'string' ? [item.value] : []));
  return [];
}
