// The provisioning subset of the App Store Connect API that super signature needs: devices,
// bundle ids, certificates and ad-hoc profiles (distribution-protocols.md §3.2.3), with the
// pitfalls of §3.4 handled here once:
// - filters are not exact (filter[identifier] matches substrings; filter[udid] is case-folded):
//   every lookup re-filters client-side;
// - device registration is idempotent: look up first, and a "device exists" 409 means "find it";
//   a DISABLED device is re-enabled (disabling never freed its slot anyway);
// - device status is an open set (PROCESSING, INELIGIBLE exist) and is passed through;
// - profiles cannot be edited: callers create a new one (unique name) and then delete the old one;
// - registrations are idempotent: a bundle id or capability another worker (or the portal) added
//   meanwhile answers 409, and the 409 means "look again" before it means "refused".
import { AppError } from '../errors.ts';
import { AscClient, type AscClientOptions } from './client.ts';
import { AscApiError, toAppError } from './errors.ts';
import type { CapabilityRequest } from './capabilities.ts';
import { DISTRIBUTION_CERTIFICATE_TYPES, type AscBundleId, type AscBundleIdCapability, type AscCertificate, type AscDevice, type AscProfile } from './types.ts';
import { sameUdid } from './udid.ts';

type Resource = { id: string; type: string; attributes?: Record<string, unknown> };

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Apple dates come as "…+00:00" or the older "…+0000"; both parse. */
export function parseAppleDate(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const fixed = value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const date = new Date(fixed);
  return Number.isNaN(date.getTime()) ? null : date;
}

function device(resource: Resource): AscDevice {
  const a = resource.attributes ?? {};
  return {
    id: resource.id,
    udid: str(a.udid) ?? '',
    name: str(a.name) ?? '',
    deviceClass: str(a.deviceClass) ?? 'UNKNOWN',
    status: str(a.status) ?? 'UNKNOWN',
    platform: str(a.platform) ?? 'IOS',
    model: str(a.model),
    addedDate: parseAppleDate(a.addedDate),
  };
}

function bundleId(resource: Resource): AscBundleId {
  const a = resource.attributes ?? {};
  return { id: resource.id, identifier: str(a.identifier) ?? '', name: str(a.name) ?? '', platform: str(a.platform) ?? 'IOS', seedId: str(a.seedId) };
}

function capability(resource: Resource): AscBundleIdCapability {
  const a = resource.attributes ?? {};
  return { id: resource.id, capabilityType: str(a.capabilityType) ?? '', settings: Array.isArray(a.settings) ? a.settings : [] };
}

function certificate(resource: Resource): AscCertificate {
  const a = resource.attributes ?? {};
  const content = str(a.certificateContent);
  return {
    id: resource.id,
    certificateType: str(a.certificateType) ?? '',
    displayName: str(a.displayName),
    name: str(a.name),
    serialNumber: normalizeSerial(str(a.serialNumber) ?? ''),
    expirationDate: parseAppleDate(a.expirationDate),
    content: content ? Buffer.from(content, 'base64') : null,
  };
}

function profile(resource: Resource): AscProfile {
  const a = resource.attributes ?? {};
  const content = str(a.profileContent);
  if (!content) throw new AppError('apple_request_failed', `App Store Connect returned profile ${resource.id} without its content.`);
  return {
    id: resource.id,
    name: str(a.name) ?? '',
    profileType: str(a.profileType) ?? '',
    profileState: str(a.profileState) ?? '',
    uuid: str(a.uuid) ?? '',
    content: Buffer.from(content, 'base64'),
    expirationDate: parseAppleDate(a.expirationDate),
  };
}

/** Serial numbers compare as numbers: upper-case hex without leading zeros (flyapps matches by int). */
export function normalizeSerial(hex: string): string {
  return hex.replace(/[^0-9a-fA-F]/g, '').toUpperCase().replace(/^0+(?=.)/, '');
}

const resources = (value: unknown): Resource[] => (Array.isArray(value) ? (value as Resource[]) : []);
const single = (value: { data: unknown }): Resource => value.data as Resource;

export class AppStoreConnect {
  readonly client: AscClient;

  constructor(options: AscClientOptions | AscClient) {
    this.client = options instanceof AscClient ? options : new AscClient(options);
  }

  /** Runs an API call, turning Apple's refusals into catalogue AppErrors. */
  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof AscApiError) throw toAppError(error);
      throw error;
    }
  }

  // ---- devices ----

  listDevices(): Promise<AscDevice[]> {
    return this.#call(async () => resources(await this.client.getAll('/v1/devices', { 'filter[platform]': ['IOS'] })).map(device));
  }

  /** Every device registered with this UDID (case-insensitive; usually zero or one). */
  findDevices(udid: string): Promise<AscDevice[]> {
    return this.#call(() => this.#devicesWithUdid(udid));
  }

  async #devicesWithUdid(udid: string): Promise<AscDevice[]> {
    return resources(await this.client.getAll('/v1/devices', { 'filter[udid]': [udid] }))
      .map(device)
      .filter((d) => sameUdid(d.udid, udid));
  }

  /**
   * Registers the UDID, or finds it when the team already has it; a DISABLED device is enabled.
   * The result may be PROCESSING or INELIGIBLE: the caller decides what that means.
   */
  registerDevice(input: { udid: string; name: string }): Promise<{ device: AscDevice; created: boolean }> {
    return this.#call(async () => {
      const existing = await this.#existing(input.udid);
      if (existing) return { device: existing, created: false };
      try {
        const created = await this.client.post('/v1/devices', { data: { type: 'devices', attributes: { name: input.name, udid: input.udid, platform: 'IOS' } } });
        return { device: device(single(created)), created: true };
      } catch (error) {
        if (!(error instanceof AscApiError) || error.condition !== 'device_exists') throw error;
        // Registered meanwhile (another worker, the portal) or spelled differently: find it.
        const found = await this.#existing(input.udid);
        if (!found) throw error;
        return { device: found, created: false };
      }
    });
  }

  async #existing(udid: string): Promise<AscDevice | null> {
    const matches = await this.#devicesWithUdid(udid);
    const found = matches.find((d) => d.status !== 'DISABLED') ?? matches[0];
    if (!found) return null;
    if (found.status !== 'DISABLED') return found;
    const enabled = await this.client.patch(`/v1/devices/${encodeURIComponent(found.id)}`, { data: { type: 'devices', id: found.id, attributes: { status: 'ENABLED' } } });
    return device(single(enabled));
  }

  // ---- bundle ids ----

  /** The bundle id with exactly this identifier, or null (filter[identifier] is a substring match). */
  findBundleId(identifier: string): Promise<AscBundleId | null> {
    return this.#call(async () => {
      const all = resources(await this.client.getAll('/v1/bundleIds', { 'filter[identifier]': [identifier] })).map(bundleId);
      return all.find((b) => b.identifier === identifier) ?? null;
    });
  }

  listBundleIds(): Promise<AscBundleId[]> {
    return this.#call(async () => resources(await this.client.getAll('/v1/bundleIds')).map(bundleId));
  }

  /**
   * Finds or registers an App ID (explicit, or the team wildcard "*"). A 409 "not available" is
   * looked up again: another worker of this team may just have registered it; when the team
   * still does not have it, another team owns the identifier (`bundle_id_unavailable`).
   */
  ensureBundleId(identifier: string, name: string): Promise<AscBundleId> {
    return this.#call(async () => {
      const found = await this.findBundleId(identifier);
      if (found) return found;
      try {
        const created = await this.client.post('/v1/bundleIds', { data: { type: 'bundleIds', attributes: { identifier, name, platform: 'IOS' } } });
        return bundleId(single(created));
      } catch (error) {
        if (!(error instanceof AscApiError) || error.condition !== 'bundle_id_taken') throw error;
        const mine = await this.findBundleId(identifier);
        if (mine) return mine;
        throw new AppError('bundle_id_unavailable', `The App ID "${identifier}" is registered by another Apple team; this developer account cannot provision it.`, {
          cause: error,
          details: { identifier, apple_status: error.status, apple_code: error.code },
        });
      }
    });
  }

  // ---- capabilities ----

  /** The capabilities enabled on a bundle id. */
  listCapabilities(bundleIdId: string): Promise<AscBundleIdCapability[]> {
    return this.#call(async () => resources(await this.client.getAll(`/v1/bundleIds/${encodeURIComponent(bundleIdId)}/bundleIdCapabilities`)).map(capability));
  }

  /**
   * Enables a capability on a bundle id; one already enabled (by another worker or in the
   * portal: Apple answers 409) is found and returned instead.
   */
  enableCapability(bundleIdId: string, request: CapabilityRequest): Promise<AscBundleIdCapability> {
    return this.#call(async () => {
      try {
        const created = await this.client.post('/v1/bundleIdCapabilities', {
          data: {
            type: 'bundleIdCapabilities',
            attributes: { capabilityType: request.capabilityType, settings: request.settings },
            relationships: { bundleId: { data: { type: 'bundleIds', id: bundleIdId } } },
          },
        });
        return capability(single(created));
      } catch (error) {
        if (!(error instanceof AscApiError) || error.status !== 409) throw error;
        const enabled = (await this.listCapabilities(bundleIdId)).find((c) => c.capabilityType === request.capabilityType);
        if (enabled) return enabled;
        throw error;
      }
    });
  }

  // ---- certificates ----

  /** Current distribution certificates (IOS_DISTRIBUTION, DISTRIBUTION), with their DER. */
  listDistributionCertificates(): Promise<AscCertificate[]> {
    return this.#call(async () =>
      resources(await this.client.getAll('/v1/certificates', { 'filter[certificateType]': [...DISTRIBUTION_CERTIFICATE_TYPES] }))
        .map(certificate)
        .filter((c) => (DISTRIBUTION_CERTIFICATE_TYPES as readonly string[]).includes(c.certificateType)),
    );
  }

  // ---- profiles ----

  /** Creates an IOS_APP_ADHOC profile; `name` must be unique in the team. */
  createAdHocProfile(input: { name: string; bundleIdId: string; certificateIds: string[]; deviceIds: string[] }): Promise<AscProfile> {
    return this.#call(async () => {
      const created = await this.client.post('/v1/profiles', {
        data: {
          type: 'profiles',
          attributes: { name: input.name, profileType: 'IOS_APP_ADHOC' },
          relationships: {
            bundleId: { data: { type: 'bundleIds', id: input.bundleIdId } },
            certificates: { data: input.certificateIds.map((id) => ({ type: 'certificates', id })) },
            devices: { data: input.deviceIds.map((id) => ({ type: 'devices', id })) },
          },
        },
      });
      return profile(single(created));
    });
  }

  /** Deletes a profile; one already gone is not an error. */
  deleteProfile(id: string): Promise<void> {
    return this.#call(async () => {
      try {
        await this.client.delete(`/v1/profiles/${encodeURIComponent(id)}`);
      } catch (error) {
        if (error instanceof AscApiError && error.status === 404) return;
        throw error;
      }
    });
  }
}
