// Apple developer accounts for super signature: an App Store Connect API key (issuer id, key id,
// .p8) plus the team's distribution identity (.p12 + password). On creation the key is checked
// against the API, the .p12's certificate must be one of the team's current distribution
// certificates (matched by serial, as flyapps does), and the team's devices and App IDs are
// synced so slot counts start from Apple's numbers, not zero. Secrets are sealed at rest.
import { createHash } from 'node:crypto';
import { AppStoreConnect, normalizeSerial } from '../apple/app-store-connect.ts';
import { importAscKey } from '../apple/jwt.ts';
import { DEVICE_SLOTS_PER_CLASS, type AscDevice } from '../apple/types.ts';
import { normalizeUdid } from '../apple/udid.ts';
import type { Db } from '../db/database.ts';
import type { DeveloperAccountHealth, DeveloperAccountRow } from '../db/super-tables.ts';
import { AppError, errorCodeOf, type ErrorCode } from '../errors.ts';
import type { RevocationCheckRow } from '../db/lifecycle-tables.ts';
import { computeHealth, type HealthFinding, type HealthView } from './certificate-health.ts';
import type { Principal } from './principal.ts';
import type { RevocationService } from './revocation.ts';

export interface DeveloperAccountInput {
  name: string | null;
  issuerId: string;
  keyId: string;
  p8: string;
  p12: Buffer;
  password: string | null;
}

export type DeviceClassSlots = Record<'iphone' | 'ipad' | 'ipod', { used: number; limit: number; free: number }>;

/** A developer account with what its row alone does not say: whether it is usable now and its device slots. */
export interface DeveloperAccountRecord {
  account: DeveloperAccountRow;
  usable: boolean;
  slots: DeviceClassSlots;
  /** The distribution certificate's lifecycle health (dates and revocation), like a certificate's. */
  certificateHealth: HealthView;
}

/** Loads a .p12 (src/signing/cms loadIdentity), injected so the service does not load pkijs at start. */
export type DistributionIdentityReader = (p12: Buffer, password: string) => Promise<{ certificate: Buffer; chain?: Buffer[]; subject: string; serial: string; teamId: string | null; notAfter: Date }>;

export interface DeveloperAccountServiceOptions {
  db: Db;
  ascBaseUrl: string;
  readIdentity: DistributionIdentityReader;
  now?: () => Date;
  /** Test seam: App Store Connect client options (backoff, fetch). */
  ascOptions?: { baseDelayMs?: number; maxRetries?: number };
  /** Revocation (OCSP) of the distribution certificate, checked at registration and by the worker. */
  revocation?: RevocationService;
  /** Lifecycle health `expiring` within this many days (default 30). */
  expiringDays?: number;
  /** After Apple's verdict on an account was recorded: records its health (alerts on a change). */
  onHealthRecorded?: (row: DeveloperAccountRow) => Promise<void>;
}

const ISSUER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEY_ID = /^[A-Z0-9]{8,16}$/;

/** Health a catalogue code puts an account in, for codes that are about the account itself. */
const HEALTH_OF: Partial<Record<ErrorCode, DeveloperAccountHealth>> = {
  developer_key_rejected: 'key_rejected',
  developer_agreement_required: 'agreement_required',
  developer_certificate_unusable: 'certificate_revoked',
};

export class DeveloperAccountService {
  readonly #options: DeveloperAccountServiceOptions;
  readonly #clients = new Map<string, AppStoreConnect>();

  constructor(options: DeveloperAccountServiceOptions) {
    this.#options = options;
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }

  /** One client per account key, reused so its requests are serialised and its token cached. */
  client(row: DeveloperAccountRow): AppStoreConnect {
    const cacheKey = `${row.id}:${row.key_id}`;
    let client = this.#clients.get(cacheKey);
    if (!client) {
      const secrets = this.#options.db.repos.developerAccounts.secrets(row);
      client = new AppStoreConnect({ baseUrl: this.#options.ascBaseUrl, key: { issuerId: row.issuer_id, keyId: row.key_id, privateKeyPem: secrets.p8Pem }, ...this.#options.ascOptions });
      this.#clients.set(cacheKey, client);
    }
    return client;
  }

  async create(principal: Principal, input: DeveloperAccountInput): Promise<DeveloperAccountRecord> {
    if (!ISSUER_ID.test(input.issuerId)) throw new AppError('invalid_request', 'issuer_id must be the UUID shown above the keys in App Store Connect.', { details: { field: 'issuer_id' } });
    if (!KEY_ID.test(input.keyId)) throw new AppError('invalid_request', 'key_id must be the key\'s id (10 upper-case letters and digits).', { details: { field: 'key_id' } });
    importAscKey(input.p8);
    const identity = await this.#readIdentity(input.p12, input.password ?? '');
    if (identity.notAfter.getTime() <= this.#now().getTime()) {
      throw new AppError('developer_certificate_unusable', `The distribution certificate expired on ${identity.notAfter.toISOString().slice(0, 10)}.`);
    }
    const revocation = await this.#options.revocation?.check(identity.certificate, identity.chain ?? []);
    if (revocation?.status === 'revoked') {
      throw new AppError('developer_certificate_unusable', `The distribution certificate was revoked${revocation.revoked_at ? ` on ${revocation.revoked_at.slice(0, 10)}` : ''} (its OCSP responder says so).`);
    }
    const api = new AppStoreConnect({ baseUrl: this.#options.ascBaseUrl, key: { issuerId: input.issuerId, keyId: input.keyId, privateKeyPem: input.p8 }, ...this.#options.ascOptions });
    const certificates = await api.listDistributionCertificates();
    const serial = normalizeSerial(identity.serial);
    const match = certificates.find((c) => c.serialNumber === serial);
    if (!match) {
      throw new AppError('developer_certificate_mismatch', `The .p12 certificate (serial ${serial}) is not among this team's ${certificates.length} current distribution certificate(s).`);
    }
    const [devices, bundleIds] = await Promise.all([api.listDevices(), api.listBundleIds()]);
    const teamId = identity.teamId ?? bundleIds[0]?.seedId ?? null;
    if (teamId === null) throw new AppError('developer_certificate_mismatch', 'The distribution certificate names no team (subject OU).');
    const repo = this.#options.db.repos.developerAccounts;
    let row: DeveloperAccountRow;
    try {
      row = await repo.create({
        accountId: principal.accountId,
        name: input.name,
        issuerId: input.issuerId,
        keyId: input.keyId,
        p8Pem: input.p8,
        p12: input.p12,
        p12Password: input.password,
        teamId,
        certificate: { subject: identity.subject, serial, fingerprint: createHash('sha256').update(identity.certificate).digest('hex'), notAfter: identity.notAfter },
        ascCertificateId: match.id,
        slotsPerClass: DEVICE_SLOTS_PER_CLASS,
        bundleIds: bundleIds.map((b) => ({ id: b.id, identifier: b.identifier })),
        health: 'ok',
        healthDetail: null,
      });
    } catch (error) {
      if (/unique|constraint/i.test(String((error as Error).message))) {
        throw new AppError('invalid_request', 'This API key is already registered as a developer account.', { details: { field: 'key_id' } });
      }
      throw error;
    }
    await repo.syncDevices(row.id, syncable(devices));
    await this.#healthRecorded(row.id);
    return this.record(row);
  }

  async #readIdentity(p12: Buffer, password: string) {
    try {
      return await this.#options.readIdentity(p12, password);
    } catch (error) {
      const code = errorCodeOf(error);
      if (code === 'keystore_password_incorrect' || code === 'key_password_incorrect') {
        throw new AppError('certificate_password_incorrect', 'The password does not open the .p12 file.', { cause: error });
      }
      throw error;
    }
  }

  /**
   * Rotation for super signature: a new distribution identity for the account (its certificate
   * renewed, expiring or revoked). It must be current in the team like at registration. Every
   * profile made with the old certificate is retired (deleted at Apple, best effort) so the next
   * device request makes new ones naming the new certificate, and per-device builds, keyed by
   * profile, are made again with the new identity.
   */
  async replaceCertificate(principal: Principal, id: string, input: { p12: Buffer; password: string | null }): Promise<DeveloperAccountRecord> {
    const row = await this.#find(principal, id);
    const identity = await this.#readIdentity(input.p12, input.password ?? '');
    if (identity.notAfter.getTime() <= this.#now().getTime()) {
      throw new AppError('developer_certificate_unusable', `The distribution certificate expired on ${identity.notAfter.toISOString().slice(0, 10)}.`);
    }
    const revocation = await this.#options.revocation?.check(identity.certificate, identity.chain ?? []);
    if (revocation?.status === 'revoked') throw new AppError('developer_certificate_unusable', 'The distribution certificate was revoked (its OCSP responder says so).');
    const api = this.client(row);
    const serial = normalizeSerial(identity.serial);
    const match = (await api.listDistributionCertificates()).find((c) => c.serialNumber === serial);
    if (!match) throw new AppError('developer_certificate_mismatch', `The .p12 certificate (serial ${serial}) is not among this team's current distribution certificates.`);
    if (identity.teamId !== null && identity.teamId !== row.team_id) throw new AppError('developer_certificate_mismatch', `The certificate belongs to team ${identity.teamId}, the account to team ${row.team_id}.`);
    const fingerprint = createHash('sha256').update(identity.certificate).digest('hex');
    const repos = this.#options.db.repos;
    const updated = await repos.developerAccounts.replaceCertificate(row.id, { p12: input.p12, p12Password: input.password, certificate: { subject: identity.subject, serial, fingerprint, notAfter: identity.notAfter }, ascCertificateId: match.id });
    for (const key of this.#clients.keys()) if (key.startsWith(`${row.id}:`)) this.#clients.delete(key);
    for (const retired of await repos.superSignature.retireForNewCertificate(row.id)) {
      // Builds already installed keep working until the old certificate is revoked; Apple's copies can go.
      await api.deleteProfile(retired.asc_profile_id).catch(() => undefined);
    }
    await this.#healthRecorded(row.id);
    return this.record(updated ?? row);
  }

  /**
   * Re-checks the key and certificate against App Store Connect and resyncs devices and App IDs;
   * records the resulting health (never throws for an account-level problem: it is the answer).
   */
  async check(principal: Principal, id: string): Promise<DeveloperAccountRecord> {
    const row = await this.#find(principal, id);
    await this.refresh(row);
    return this.record((await this.#options.db.repos.developerAccounts.findById(id)) ?? row);
  }

  async refresh(row: DeveloperAccountRow): Promise<DeveloperAccountHealth> {
    try {
      return await this.#refresh(row);
    } finally {
      await this.#healthRecorded(row.id);
    }
  }

  async #healthRecorded(id: string): Promise<void> {
    const hook = this.#options.onHealthRecorded;
    if (!hook) return;
    const row = await this.#options.db.repos.developerAccounts.findById(id);
    // An alert that cannot be recorded now is recorded by the next periodic check.
    if (row) await hook(row).catch(() => {});
  }

  async #refresh(row: DeveloperAccountRow): Promise<DeveloperAccountHealth> {
    const repo = this.#options.db.repos.developerAccounts;
    try {
      if (Date.parse(row.certificate_not_after) <= this.#now().getTime()) {
        await repo.setHealth(row.id, 'certificate_expired', `The distribution certificate expired on ${row.certificate_not_after.slice(0, 10)}.`);
        return 'certificate_expired';
      }
      const api = this.client(row);
      const certificates = await api.listDistributionCertificates();
      if (!certificates.some((c) => c.serialNumber === row.certificate_serial)) {
        await repo.setHealth(row.id, 'certificate_revoked', 'The distribution certificate is no longer current at Apple (revoked or deleted).');
        return 'certificate_revoked';
      }
      const [devices, bundleIds] = await Promise.all([api.listDevices(), api.listBundleIds()]);
      await repo.syncDevices(row.id, syncable(devices));
      await repo.setBundleIds(row.id, bundleIds.map((b) => ({ id: b.id, identifier: b.identifier })));
      await repo.setHealth(row.id, 'ok', null);
      return 'ok';
    } catch (error) {
      const health = await this.recordFailure(row, error);
      if (health === null) throw error;
      return health;
    }
  }

  /** Marks the account unhealthy when `error` is about the account itself; returns the new health or null. */
  async recordFailure(row: DeveloperAccountRow, error: unknown): Promise<DeveloperAccountHealth | null> {
    const code = errorCodeOf(error);
    const health = code === null ? undefined : (HEALTH_OF[code] ?? (code === 'apple_unavailable' ? 'unreachable' : undefined));
    if (health === undefined) return null;
    await this.#options.db.repos.developerAccounts.setHealth(row.id, health, error instanceof Error ? error.message : String(error));
    await this.#healthRecorded(row.id);
    return health;
  }

  async list(principal: Principal): Promise<DeveloperAccountRecord[]> {
    const rows = await this.#options.db.repos.developerAccounts.list(principal.accountId);
    return Promise.all(rows.map((row) => this.record(row)));
  }

  async get(principal: Principal, id: string): Promise<DeveloperAccountRecord> {
    return this.record(await this.#find(principal, id));
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.#options.db.repos.developerAccounts.delete(principal.accountId, id))) {
      throw new AppError('developer_account_not_found', `No developer account ${id}.`);
    }
    for (const key of this.#clients.keys()) if (key.startsWith(`${id}:`)) this.#clients.delete(key);
  }

  /** Usable for new devices: healthy and its certificate neither expired nor (as last recorded) revoked. */
  usable(row: DeveloperAccountRow): boolean {
    return row.health === 'ok' && row.health_state !== 'revoked' && Date.parse(row.certificate_not_after) > this.#now().getTime();
  }

  /** The distribution certificate's lifecycle health from its dates, revocation and Apple's verdicts. */
  async certificateHealth(row: DeveloperAccountRow, revocation?: RevocationCheckRow | null): Promise<HealthView> {
    const answer = revocation === undefined ? await this.#options.db.repos.lifecycle.findRevocation(row.certificate_fingerprint) : revocation;
    const extra: HealthFinding[] = [];
    // Apple's own word (App Store Connect no longer lists the certificate) counts like an OCSP answer.
    if (row.health === 'certificate_revoked') extra.push({ state: 'revoked', reason: row.health_detail ?? 'App Store Connect reports the distribution certificate revoked.' });
    return computeHealth({ now: this.#now(), expiringDays: this.#options.expiringDays ?? 30, notAfter: row.certificate_not_after, teamId: row.team_id, profiles: null, revocation: answer, revocable: answer === null || answer.status !== 'not_applicable', extra });
  }

  async #find(principal: Principal, id: string): Promise<DeveloperAccountRow> {
    const row = await this.#options.db.repos.developerAccounts.find(principal.accountId, id);
    if (!row) throw new AppError('developer_account_not_found', `No developer account ${id}.`);
    return row;
  }

  async record(row: DeveloperAccountRow): Promise<DeveloperAccountRecord> {
    const usage = await this.#options.db.repos.developerAccounts.usage(row.id);
    const slot = (deviceClass: string) => {
      const used = usage[deviceClass] ?? 0;
      return { used, limit: row.slots_per_class, free: Math.max(0, row.slots_per_class - used) };
    };
    return { account: row, usable: this.usable(row), slots: { iphone: slot('IPHONE'), ipad: slot('IPAD'), ipod: slot('IPOD') }, certificateHealth: await this.certificateHealth(row) };
  }
}

/** The team name for profiles: the distribution certificate's O=, else the team id. */
export function teamNameOf(account: DeveloperAccountRow): string {
  return /(?:^|,)\s*O=((?:\\,|[^,])+)/.exec(account.certificate_subject)?.[1] ?? account.team_id;
}

function syncable(devices: readonly AscDevice[]) {
  return devices.flatMap((d) => {
    const udid = normalizeUdid(d.udid);
    return udid === null ? [] : [{ udid, deviceClass: d.deviceClass, status: d.status, ascDeviceId: d.id, name: d.name || null }];
  });
}
