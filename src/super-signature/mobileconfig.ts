// The UDID-capture request profile: a "Profile Service" configuration profile (Apple's archived
// "Over-the-Air Profile Delivery and Configuration", profile-service.html;
// distribution-protocols.md §3.1.1). Installing it makes iOS POST the device's attributes, signed
// by the device, to PayloadContent.URL, echoing PayloadContent.Challenge as CHALLENGE.
// Building only; signing is in profile-signer.ts, the device's answer in device-response.ts.
import { randomUUID } from 'node:crypto';
import { plistArray, plistDict, plistInteger, plistString, writeXmlPlist } from '../signing/plist/index.ts';

/** Attributes requested from the device. Only UDID is required; the rest may be absent (§3.1.1). */
export const DEVICE_ATTRIBUTES = ['UDID', 'PRODUCT', 'VERSION', 'DEVICE_NAME'] as const;

/** Upper bound of a device's answer to the request; real ones are a few KB (certificates included). */
export const MAX_DEVICE_RESPONSE_BYTES = 64 * 1024;

export interface ProfileServiceRequest {
  /** https URL the device POSTs to (it carries the challenge in its query). */
  callbackUrl: string;
  /** Single-use value bound to this visit (CHALLENGE in the device's answer). */
  challenge: string;
  appName: string;
  organization: string;
  /** Reverse-DNS identifier; iOS replaces an installed profile with the same identifier. */
  identifier: string;
  /** Fresh per download (flyapps' static-UUID bug, §3.4 item 6); injectable for golden tests. */
  uuid?: string;
}

/** The XML plist bytes, starting with `<?xml` (anything before it breaks iOS's parser, §3.1.1). */
export function buildProfileServiceRequest(request: ProfileServiceRequest): Buffer {
  const profile = plistDict({
    PayloadContent: plistDict({
      URL: plistString(request.callbackUrl),
      DeviceAttributes: plistArray(DEVICE_ATTRIBUTES.map((a) => plistString(a))),
      Challenge: plistString(request.challenge),
    }),
    PayloadOrganization: plistString(request.organization),
    PayloadDisplayName: plistString(`${request.appName} – install authorization`),
    PayloadDescription: plistString(`Reads only the device identifier needed to install ${request.appName} on this device. Nothing is installed on the device.`),
    PayloadIdentifier: plistString(request.identifier),
    PayloadUUID: plistString(request.uuid ?? randomUUID().toUpperCase()),
    PayloadVersion: plistInteger(1),
    PayloadType: plistString('Profile Service'),
  });
  return writeXmlPlist(profile);
}
