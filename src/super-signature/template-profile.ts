// The "template" provisioning profile a super task's prepared build is signed with, before any
// device exists (an ad-hoc profile needs at least one device, distribution-protocols.md §3.2.3).
// It has the shape of Apple's ad-hoc profile for the App ID (same application-identifier, team,
// entitlements and developer certificate, so the prepared build's signatures are those a real
// profile produces) but no devices, and it is signed by the account's own key, not by Apple:
// the prepared build cannot be installed. Per-device builds replace it with Apple's profile.
import { randomUUID } from 'node:crypto';
import { signAttached, type Identity } from '../signing/cms/index.ts';
import { plistArray, plistBoolean, plistData, plistDate, plistDict, plistInteger, plistString, writeXmlPlist } from '../signing/plist/index.ts';
import { SUPER_APP_ID, SUPER_APP_ID_NAME } from './constants.ts';

export interface TemplateProfileInput {
  identity: Identity;
  teamId: string;
  teamName: string;
  /** The App ID: an explicit bundle id or a wildcard ("*"). */
  bundleId: string;
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
    Entitlements: plistDict({
      'application-identifier': plistString(`${teamId}.${input.bundleId}`),
      'com.apple.developer.team-identifier': plistString(teamId),
      'get-task-allow': plistBoolean(false),
      'keychain-access-groups': plistArray([plistString(`${teamId}.*`)]),
    }),
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
