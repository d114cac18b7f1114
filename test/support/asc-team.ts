// The teams of the App Store Connect fake (asc-server.ts): each with its API key, devices,
// certificates and profiles, and the knobs tests turn (device cap, review mode, revoked key…).
import { X509Certificate, generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import type { FakeCapability } from './asc-capabilities.ts';
import type { ProfileOptions } from './pki.ts';

export interface FakeTeamKey {
  issuerId: string;
  keyId: string;
  privateKeyPem: string;
}

export interface Device { id: string; udid: string; name: string; deviceClass: string; status: string; addedDate: string }
export interface CapabilityRecord extends FakeCapability { id: string }
export interface BundleIdRecord { id: string; identifier: string; name: string; team: FakeTeam; capabilities: CapabilityRecord[] }
export interface CertificateRecord { id: string; der: Buffer; serialHex: string; type: string; revoked: boolean; expires: string }
export interface ProfileRecord { id: string; name: string; uuid: string; bundleIdId: string; deviceIds: string[]; certificateIds: string[]; content: Buffer; created: string; expires: string }

export class FakeTeam {
  readonly teamId: string;
  readonly key: FakeTeamKey;
  readonly publicKey: KeyObject;
  readonly devices: Device[] = [];
  readonly certificates: CertificateRecord[] = [];
  readonly profiles: ProfileRecord[] = [];
  deviceLimit = 100;
  /** New devices start PROCESSING (Apple reviewing the account) until settle() is called. */
  reviewMode = false;
  keyRevoked = false;
  agreementMissing = false;
  /** Extra options for the profiles this team's fake makes (e.g. other entitlements). */
  profileOptions: Partial<ProfileOptions> = {};
  /** Device class per UDID (upper case); IPHONE when not set (Apple derives it from the hardware). */
  readonly deviceClasses = new Map<string, string>();

  constructor(teamId: string) {
    this.teamId = teamId;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.publicKey = publicKey;
    this.key = { issuerId: randomUUID(), keyId: randomBytes(5).toString('hex').toUpperCase(), privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
  }

  /** Adds a distribution certificate (DER) to the team, as uploading a CSR in the portal would. */
  addCertificate(der: Buffer, type = 'IOS_DISTRIBUTION', expires = '2045-01-01T00:00:00.000+00:00'): string {
    const id = `CERT${randomBytes(4).toString('hex').toUpperCase()}`;
    this.certificates.push({ id, der, serialHex: new X509Certificate(der).serialNumber.toUpperCase(), type, revoked: false, expires });
    return id;
  }

  revokeCertificates(): void {
    for (const c of this.certificates) c.revoked = true;
  }

  /** Ends a review: every PROCESSING device becomes `status`. */
  settle(status: 'ENABLED' | 'INELIGIBLE'): void {
    for (const d of this.devices) if (d.status === 'PROCESSING') d.status = status;
  }

  devicesOfClass(deviceClass: string): number {
    return this.devices.filter((d) => d.deviceClass === deviceClass).length;
  }

  /** Pre-registers a device (as if added in the portal earlier). */
  seedDevice(udid: string, deviceClass = 'IPHONE', status = 'ENABLED'): void {
    this.devices.push({ id: newId('DEV'), udid, name: `seed ${udid.slice(0, 6)}`, deviceClass, status, addedDate: appleDate(new Date(), true) });
  }
}

export const newId = (prefix: string) => `${prefix}${randomBytes(5).toString('hex').toUpperCase()}`;
/** Apple's two date spellings (§3.2.2); the fake alternates them so clients parse both. */
export function appleDate(date: Date, colon: boolean): string {
  return date.toISOString().replace('Z', colon ? '+00:00' : '+0000');
}
