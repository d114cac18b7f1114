// The device's answer to the Profile Service request (distribution-protocols.md §3.1.3): a CMS
// SignedData (attached; DER or indefinite-length BER, which the CMS reader accepts) whose content
// is an XML plist of UPPER-CASE attributes: UDID, PRODUCT, VERSION, DEVICE_NAME and CHALLENGE.
// The signature is verified for integrity (every signer, over the content); the device
// certificate's chain to Apple's "iPhone Device CA" is not pinned (§6 question 3: which CA
// current devices chain to is unconfirmed), so the CHALLENGE is what binds the answer to a visit.
import { deviceClassForProduct, normalizeUdid } from '../apple/udid.ts';
import { AppError } from '../errors.ts';
import { verifySignedData } from '../signing/cms/index.ts';
import { parsePlist, plistToJs } from '../signing/plist/index.ts';
import { MAX_DEVICE_RESPONSE_BYTES } from './mobileconfig.ts';

export interface DeviceAttributes {
  udid: string;
  challenge: string;
  product: string | null;
  /** OS build (e.g. "21F90"), not the marketing version. */
  version: string | null;
  deviceName: string | null;
  deviceClass: string | null;
}

export function readDeviceResponse(body: Buffer): DeviceAttributes {
  if (body.length === 0) throw new AppError('device_response_invalid', 'The device sent an empty body.');
  if (body.length > MAX_DEVICE_RESPONSE_BYTES) throw new AppError('device_response_invalid', 'The device response is too large.');
  let content: Buffer;
  try {
    content = verifySignedData(body).content;
  } catch (cause) {
    throw new AppError('device_response_invalid', `The device response is not a valid signed message: ${(cause as Error).message}`, { cause });
  }
  let attributes: Record<string, unknown>;
  try {
    const value = plistToJs(parsePlist(content).value);
    if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value) || value instanceof Date) throw new Error('not a dictionary');
    attributes = value as Record<string, unknown>;
  } catch (cause) {
    throw new AppError('device_response_invalid', 'The signed content is not a property list of device attributes.', { cause });
  }
  const text = (key: string): string | null => (typeof attributes[key] === 'string' && (attributes[key] as string).length <= 256 ? (attributes[key] as string) : null);
  const rawUdid = text('UDID');
  if (rawUdid === null) throw new AppError('device_response_invalid', 'The device response carries no UDID.');
  const udid = normalizeUdid(rawUdid);
  if (udid === null) throw new AppError('device_udid_invalid', `"${rawUdid.slice(0, 64)}" is not a device identifier.`);
  const challenge = text('CHALLENGE');
  if (challenge === null) throw new AppError('udid_challenge_invalid', 'The device response carries no CHALLENGE.');
  const product = text('PRODUCT');
  return { udid, challenge, product, version: text('VERSION'), deviceName: text('DEVICE_NAME'), deviceClass: deviceClassForProduct(product) };
}
