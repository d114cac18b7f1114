// Certificates: validated on upload (the password must open the file, the key must match its
// certificate, an iOS profile must name the certificate), then sealed at rest by the repository.
// Listings show metadata only; the secrets are opened only by the worker right before signing.
// An iOS enterprise certificate holds several provisioning profiles (the app and each extension
// may have an explicit App ID of their own): each is checked the same way when it is attached.
import { createHash, X509Certificate } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { CertificateProfileRow } from '../db/profile-tables.ts';
import { collectRows } from '../db/repositories/pagination.ts';
import type { CertificateKind, CertificateRow } from '../db/schema.ts';
import { AppError, errorCodeOf } from '../errors.ts';
import { SigningError } from '../signing/errors.ts';
import type { Principal } from './principal.ts';

/** The signing identity's certificate as the validation needs it (from src/signing/cms loadIdentity). */
export interface LoadedIdentity {
  /** Signer certificate, DER. */
  certificate: Buffer;
  alias?: string;
}
export type IdentityLoader = (
  bytes: Buffer,
  options: { password?: string; keyPassword?: string; alias?: string; certificate?: Buffer },
) => Promise<LoadedIdentity>;

/** What the service needs from a provisioning profile (src/signing/ios profile reader). */
export interface ProfileSummary {
  name: string | null;
  uuid: string;
  /** Application identifier, e.g. "TEAMID.com.example.*". */
  appId: string | null;
  /** "enterprise" | "ad-hoc" | "development" | "app-store". */
  type: string | null;
  expiresAt: Date | null;
  teamId: string | null;
  /** DeveloperCertificates, DER. */
  certificates: Buffer[];
  /** The entitlements the profile grants, as plain JSON. */
  entitlements: unknown;
}
export type ProfileReader = (bytes: Buffer) => Promise<ProfileSummary>;

interface CommonInput {
  file: { name: string; data: Buffer };
  password: string | null;
  name: string | null;
}
export type CertificateInput =
  | (CommonInput & { kind: 'ios_enterprise'; profile: Buffer })
  | (CommonInput & { kind: 'android'; alias: string | null; keyPassword: string | null; certificate: Buffer | null });

/** A certificate with its provisioning profiles (iOS, oldest first) and how many usable install links it signed. */
export interface CertificateRecord {
  certificate: CertificateRow;
  profiles: CertificateProfileRow[];
  liveLinks: number;
}

export interface CertificateServiceOptions {
  db: Db;
  loadIdentity: IdentityLoader;
  /** Null while no profile reader is wired: iOS uploads then fail with profile_invalid. */
  readProfile: ProfileReader | null;
}

const PASSWORD_CODES = new Set(['keystore_password_incorrect', 'key_password_incorrect']);

/** Subject as "CN=…, OU=…, O=…" in one line (Node prints one attribute per line). */
function subjectLine(cert: X509Certificate): string {
  return cert.subject.split('\n').filter(Boolean).join(', ');
}

function subjectAttribute(cert: X509Certificate, name: string): string | null {
  const line = cert.subject.split('\n').find((l) => l.startsWith(`${name}=`));
  return line ? line.slice(name.length + 1) : null;
}

export class CertificateService {
  private readonly options: CertificateServiceOptions;

  constructor(options: CertificateServiceOptions) {
    this.options = options;
  }

  async create(principal: Principal, input: CertificateInput): Promise<CertificateRecord> {
    const identity = await this.load(input);
    const cert = new X509Certificate(identity.certificate);
    const fingerprint = createHash('sha256').update(identity.certificate).digest('hex');
    let profile: ProfileSummary | null = null;
    if (input.kind === 'ios_enterprise') {
      profile = await this.readProfile(input.profile);
      this.checkNamesCertificate(profile, fingerprint, subjectLine(cert));
    }
    const { row, profiles } = await this.options.db.transaction(async (tx) => {
      const row = await tx.repos.certificates.create({
        accountId: principal.accountId,
        kind: input.kind satisfies CertificateKind,
        name: input.name,
        material: input.file.data,
        certificate: input.kind === 'android' ? input.certificate : null,
        password: input.password,
        keyPassword: input.kind === 'android' ? input.keyPassword : null,
        keyAlias: input.kind === 'android' ? (input.alias ?? identity.alias ?? null) : null,
        metadata: {
          subject: subjectLine(cert),
          teamId: profile?.teamId ?? subjectAttribute(cert, 'OU'),
          fingerprint,
          notBefore: new Date(cert.validFrom),
          notAfter: new Date(cert.validTo),
        },
      });
      if (input.kind !== 'ios_enterprise' || profile === null) return { row, profiles: [] };
      const added = await tx.repos.certificateProfiles.add({ accountId: principal.accountId, certificateId: row.id, bytes: input.profile, metadata: metadataOf(profile) });
      return { row, profiles: [added.profile] };
    });
    return { certificate: row, profiles, liveLinks: 0 };
  }

  /**
   * Attaches another provisioning profile to an iOS enterprise certificate. It must name the
   * certificate; attaching a profile (same UUID) the certificate already holds returns that one.
   */
  async addProfile(principal: Principal, certificateId: string, bytes: Buffer): Promise<{ profile: CertificateProfileRow; created: boolean }> {
    const certificate = await this.find(principal, certificateId);
    if (certificate.kind !== 'ios_enterprise') throw new AppError('invalid_request', `Certificate ${certificate.id} is ${certificate.kind}; provisioning profiles belong to ios_enterprise certificates.`, { details: { field: 'profile' } });
    const profile = await this.readProfile(bytes);
    this.checkNamesCertificate(profile, certificate.fingerprint, certificate.subject ?? certificate.id);
    const { profile: row, created } = await this.options.db.repos.certificateProfiles.add({ accountId: principal.accountId, certificateId: certificate.id, bytes, metadata: metadataOf(profile) });
    return { profile: row, created };
  }

  async listProfiles(principal: Principal, certificateId: string): Promise<CertificateProfileRow[]> {
    const certificate = await this.find(principal, certificateId);
    return this.profilesOf(certificate);
  }

  async getProfile(principal: Principal, certificateId: string, profileId: string): Promise<CertificateProfileRow> {
    const certificate = await this.find(principal, certificateId);
    const row = await this.options.db.repos.certificateProfiles.find(principal.accountId, certificate.id, profileId);
    if (!row) throw new AppError('profile_not_found', `Certificate ${certificate.id} has no provisioning profile ${profileId}.`);
    return (await this.complete([row]))[0]!;
  }

  async deleteProfile(principal: Principal, certificateId: string, profileId: string): Promise<void> {
    const certificate = await this.find(principal, certificateId);
    if (!(await this.options.db.repos.certificateProfiles.delete(principal.accountId, certificate.id, profileId))) {
      throw new AppError('profile_not_found', `Certificate ${certificate.id} has no provisioning profile ${profileId}.`);
    }
  }

  // installd compares the leaf byte for byte with DeveloperCertificates (ios-signing.md §11).
  private checkNamesCertificate(profile: ProfileSummary, fingerprint: string, subject: string): void {
    const named = profile.certificates.some((der) => createHash('sha256').update(der).digest('hex') === fingerprint);
    if (!named) throw new SigningError('profile_certificate_mismatch', `The profile "${profile.name ?? '?'}" does not include the certificate ${subject}.`);
  }

  private async profilesOf(certificate: CertificateRow): Promise<CertificateProfileRow[]> {
    if (certificate.kind !== 'ios_enterprise') return [];
    return this.complete(await this.options.db.repos.certificateProfiles.list(certificate.account_id, certificate.id));
  }

  /**
   * Profiles carried over by migration 0008 kept their UUID and entitlements only inside the
   * sealed bytes: read them once, store them, and show them like any other profile's.
   */
  private async complete(rows: CertificateProfileRow[]): Promise<CertificateProfileRow[]> {
    return Promise.all(
      rows.map(async (row) => {
        if (row.uuid !== null && row.entitlements_json !== null) return row;
        const summary = await this.readProfile(this.options.db.repos.certificateProfiles.open(row));
        await this.options.db.repos.certificateProfiles.fillMetadata(row.id, { uuid: summary.uuid, entitlements: summary.entitlements });
        return { ...row, uuid: summary.uuid, entitlements_json: JSON.stringify(summary.entitlements) };
      }),
    );
  }

  private async load(input: CertificateInput): Promise<LoadedIdentity> {
    const options: { password?: string; keyPassword?: string; alias?: string; certificate?: Buffer } = {};
    if (input.password !== null) options.password = input.password;
    if (input.kind === 'android') {
      if (input.keyPassword !== null) options.keyPassword = input.keyPassword;
      if (input.alias !== null) options.alias = input.alias;
      if (input.certificate !== null) options.certificate = input.certificate;
    }
    try {
      return await this.options.loadIdentity(input.file.data, options);
    } catch (error) {
      const code = errorCodeOf(error);
      if (code && PASSWORD_CODES.has(code)) {
        throw new AppError('certificate_password_incorrect', `The password does not open ${input.file.name || 'the certificate file'}.`, { cause: error });
      }
      throw error;
    }
  }

  private async readProfile(bytes: Buffer): Promise<ProfileSummary> {
    if (!this.options.readProfile) throw new SigningError('profile_invalid', 'Provisioning profiles cannot be read by this build of Signet.');
    return this.options.readProfile(bytes);
  }

  async list(principal: Principal): Promise<CertificateRecord[]> {
    const rows = await collectRows((page) => this.options.db.repos.certificates.list(principal.accountId, page), (row) => row);
    const profiles = await this.options.db.repos.certificateProfiles.listForCertificates(principal.accountId, rows.filter((r) => r.kind === 'ios_enterprise').map((r) => r.id));
    const live = await this.options.db.repos.distributions.liveLinksByCertificate(principal.accountId);
    return Promise.all(rows.map(async (row) => ({ certificate: row, profiles: await this.complete(profiles.get(row.id) ?? []), liveLinks: live.get(row.id) ?? 0 })));
  }

  async get(principal: Principal, id: string): Promise<CertificateRecord> {
    const row = await this.find(principal, id);
    const live = await this.options.db.repos.distributions.liveLinksByCertificate(principal.accountId);
    return { certificate: row, profiles: await this.profilesOf(row), liveLinks: live.get(row.id) ?? 0 };
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.options.db.repos.certificates.delete(principal.accountId, id))) {
      throw new AppError('certificate_not_found', `No certificate ${id}.`);
    }
  }

  private async find(principal: Principal, id: string): Promise<CertificateRow> {
    const row = await this.options.db.repos.certificates.find(principal.accountId, id);
    if (!row) throw new AppError('certificate_not_found', `No certificate ${id}.`);
    return row;
  }
}

function metadataOf(profile: ProfileSummary) {
  return { name: profile.name, uuid: profile.uuid, appId: profile.appId, type: profile.type, teamId: profile.teamId, expiresAt: profile.expiresAt, entitlements: profile.entitlements };
}
