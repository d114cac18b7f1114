// The "template" provisioning profile a super task's prepared build is signed with, before any
// device exists (an ad-hoc profile needs at least one device, distribution-protocols.md §3.2.3).
// It has the shape of Apple's ad-hoc profile for the App ID (same application-identifier, team,
// entitlements and developer certificate, so the prepared build's signatures are those a real
// profile produces) but no devices, and it is signed by the account's own key, not by Apple:
// the prepared build cannot be installed. Per-device builds replace it with Apple's profile.
// For an explicit App ID it grants exactly what the app carries over (capability-plan.ts),
// which Apple's profile grants once the capabilities are enabled: the entitlements derived from
// either are the same, so devices get incremental builds.
import { randomUUID } from 'node:crypto';
import { signAttached, type Identity } from '../signing/cms/index.ts';
import { parsePlist, plistArray, plistBoolean, plistData, plistDate, plistDict, plistInteger, plistString, writeXmlPlist, type PlistDict, type PlistValue } from '../signing/plist/index.ts';
import { IDENTITY_ENTITLEMENTS } from '../apple/capabilities.ts';
import { transferEntitlements } from '../signing/ios/profile/index.ts';
import { appIdsOf, type SuperAppPlan } from './capability-plan.ts';
import { SUPER_APP_ID, SUPER_APP_ID_NAME } from './constants.ts';

export interface TemplateProfileInput {
  identity: Identity;
  teamId: string;
  teamName: string;
  /** The App ID: an explicit bundle id or a wildcard ("*"). */
  bundleId: string;
  /** Further entitlements granted (already moved to the team), as the App ID's capabilities grant them. */
  grants?: PlistDict;
  now?: Date;
}

export const TEMPLATE_PROFILE_NAME = 'Signet template (not installable)';

export function buildTemplateProfile(input: TemplateProfileInput): Buffer {
  const now = input.now ?? new Date();
  const expires = new Date(now.getTime() + 365 * 86_400_000);
  const { teamId } = input;
  const plist = plistDict({
    AppIDName: plistString(input.bundleId === SUPER_APP_ID ? SUPER_APP_ID_NAME : `Signet ${input.bundleId}`),
    ApplicationIdentifierPrefix: plistArray([plistString(teamId)]),
    CreationDate: plistDate(now),
    DeveloperCertificates: plistArray([plistData(input.identity.certificate)]),
    Entitlements: {
      type: 'dict',
      value: new Map([
        ...(input.grants?.value ?? []),
        ['application-identifier', plistString(`${teamId}.${input.bundleId}`)],
        ['com.apple.developer.team-identifier', plistString(teamId)],
        ['get-task-allow', plistBoolean(false)],
        ['keychain-access-groups', plistArray([plistString(`${teamId}.*`)])],
        // Ad-hoc profiles grant push in the production environment.
        ...(input.grants?.value.has('aps-environment') ? [['aps-environment', plistString('production')] as const] : []),
      ]),
    },
    ExpirationDate: plistDate(expires),
    Name: plistString(TEMPLATE_PROFILE_NAME),
    Platform: plistArray([plistString('iOS')]),
    ProvisionedDevices: plistArray([]),
    TeamIdentifier: plistArray([plistString(teamId)]),
    TeamName: plistString(input.teamName),
    TimeToLive: plistInteger(365),
    UUID: plistString(randomUUID().toUpperCase()),
    Version: plistInteger(1),
  });
  return signAttached({ content: writeXmlPlist(plist), digestAlgorithm: 'sha256', signer: input.identity, withSignedAttributes: true });
}

/**
 * One template profile per App ID of the plan, each granting what its bundles carry over (the
 * original values moved to the account's team; identity keys come from the template itself).
 */
export function templateProfiles(input: { identity: Identity; teamId: string; teamName: string; plan: SuperAppPlan; now?: Date }): Buffer[] {
  return appIdsOf(input.plan).map((appId) => {
    const grants = new Map<string, PlistValue>();
    for (const bundle of input.plan.bundles.filter((b) => b.appId === appId && b.entitlementsXml !== null)) {
      const carried = parsePlist(Buffer.from(bundle.entitlementsXml!, 'utf8')).value as PlistDict;
      for (const [key, value] of transferEntitlements(carried, input.teamId, bundle.bundleId).value) if (!IDENTITY_ENTITLEMENTS.has(key)) grants.set(key, value);
    }
    return buildTemplateProfile({ identity: input.identity, teamId: input.teamId, teamName: input.teamName, bundleId: appId, grants: { type: 'dict', value: grants }, ...(input.now ? { now: input.now } : {}) });
  });
}
