// Certificates: validated on upload (the password must open the file, the key must match its
// certificate, an iOS profile must name the certificate), then sealed at rest by the repository.
// Listings show metadata only; the secrets are opened only by the worker right before signing.
// An iOS enterprise certificate holds several provisioning profiles (the app and each extension
// may have an explicit App ID of their own): each is checked the same way when it is attached.
import { createHash, X509Certificate } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { CertificateProfileRow } from '../db/profile-tables.ts';
import { collectRows } from '../db/repositories/pagination.ts';
import { PROFILE_TYPE_OF_KIND, type CertificateKind, type CertificateRow } from '../db/schema.ts';
import { AppError, errorCodeOf } from '../errors.ts';
import { SigningError } from '../signing/errors.ts';
import type { Principal } from './principal.ts';
import { computeHealth, type HealthView } from './certificate-health.ts';
import type { RevocationService } from './revocation.ts';
import type { RevocationCheckRow } from '../db/lifecycle-tables.ts';

/** The signing identity's certificate as the validation needs it (from src/signing/cms loadIdentity). */
export interface LoadedIdentity {
  /** Signer certificate, DER. */
  certificate: Buffer;
  /** Other certificates that came with the key (the issuer, when the export kept it), DER. */
  chain?: Buffer[];
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
  | (CommonInput & { kind: 'ios_enterprise' | 'ios_adhoc' | 'ios_development'; profile: Buffer })
  | (CommonInput & { kind: 'android'; alias: string | null; keyPassword: string | null; certificate: Buffer | null });

/** A certificate with its provisioning profiles (iOS, oldest first) and how many usable install links it signed. */
export interface CertificateRecord {
  certificate: CertificateRow;
  profiles: CertificateProfileRow[];
  liveLinks: number;
  /** Dates, profiles and revocation (OCSP) summed up. */
  health: HealthView;
  /** Upload answers only: what was accepted but needs attention (e.g. a profile about to expire). */
  warnings?: UploadWarning[];
}

/** Something an upload accepted but that needs attention. */
export interface UploadWarning {
  code: string;
  message: string;
}

export interface CertificateServiceOptions {
  db: Db;
  loadIdentity: IdentityLoader;
  /** Null while no profile reader is wired: iOS uploads then fail with profile_invalid. */
  readProfile: ProfileReader | null;
  /** Revocation (OCSP) checks; absent: revocation is not checked (health shows it as unknown). */
  revocation?: RevocationService;
  /** Health `expiring` within this many days (default 30). */
  expiringDays?: number;
  now?: () => Date;
  /** After an upload: records the new certificate's health (and announces it when it needs attention). */
  onCreated?: (row: CertificateRow) => Promise<void>;
}

/** A profile that expires within this many days is accepted with a warning. */
const PROFILE_WARNING_DAYS = 7;

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

  private readonly now: () => Date;

  constructor(options: CertificateServiceOptions) {
    this.options = options;
    this.now = options.now ?? (() => new Date());
  }

  async create(principal: Principal, input: CertificateInput): Promise<CertificateRecord> {
    const identity = await this.load(input);
    const cert = new X509Certificate(identity.certificate);
    const fingerprint = createHash('sha256').update(identity.certificate).digest('hex');
    if (Date.parse(cert.validTo) <= this.now().getTime()) {
      throw new SigningError('certificate_expired', `The certificate ${subjectLine(cert)} expired on ${new Date(cert.validTo).toISOString().slice(0, 10)}; nothing signed with it would install.`);
    }
    let profile: ProfileSummary | null = null;
    const warnings: UploadWarning[] = [];
    if (input.kind !== 'android') {
      profile = await this.readProfile(input.profile);
      this.checkNamesCertificate(profile, fingerprint, subjectLine(cert));
      checkProfileKind(profile, input.kind);
      warnings.push(...this.checkProfileDates(profile));
    }
    // Checked at upload: a certificate its issuer revoked is refused (no app signed with it launches).
    const revocation = await this.options.revocation?.check(identity.certificate, identity.chain ?? []);
    if (revocation?.status === 'revoked') {
      throw new AppError('certificate_revoked', `The certificate ${subjectLine(cert)} was revoked${revocation.revoked_at ? ` on ${revocation.revoked_at.slice(0, 10)}` : ''} (its OCSP responder says so).`, { details: { revoked_at: revocation.revoked_at, reason: revocation.revocation_reason } });
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
      if (input.kind === 'android' || profile === null) return { row, profiles: [] };
      const added = await tx.repos.certificateProfiles.add({ accountId: principal.accountId, certificateId: row.id, bytes: input.profile, metadata: metadataOf(profile) });
      return { row, profiles: [added.profile] };
    });
    await this.options.onCreated?.(row);
    const record = await this.recordOf(row, profiles, 0);
    return warnings.length > 0 ? { ...record, warnings } : record;
  }

  /**
   * An expired profile is refused (profile_expired: nothing signed with it installs); one that
   * expires within PROFILE_WARNING_DAYS is accepted with a warning.
   */
  private checkProfileDates(profile: ProfileSummary): UploadWarning[] {
    if (profile.expiresAt === null) return [];
    const left = profile.expiresAt.getTime() - this.now().getTime();
    const label = `The provisioning profile "${profile.name ?? profile.uuid}"`;
    if (left <= 0) throw new SigningError('profile_expired', `${label} expired on ${profile.expiresAt.toISOString().slice(0, 10)}; download a current one from the Apple Developer site.`, { details: { field: 'profile', expires_at: profile.expiresAt.toISOString() } });
    if (left <= PROFILE_WARNING_DAYS * 86400_000) {
      return [{ code: 'profile_expiring', message: `${label} expires on ${profile.expiresAt.toISOString().slice(0, 10)} (in ${Math.ceil(left / 86400_000)} days); renew it soon.` }];
    }
    return [];
  }

  /** The certificate's health from its dates, its profiles and its stored revocation answer. */
  async health(row: CertificateRow, profiles: readonly CertificateProfileRow[], revocation?: RevocationCheckRow | null): Promise<HealthView> {
    const answer = revocation === undefined ? await this.options.db.repos.lifecycle.findRevocation(row.fingerprint) : revocation;
    return computeHealth({
      now: this.now(),
      expiringDays: this.options.expiringDays ?? 30,
      notAfter: row.not_after,
      teamId: row.kind !== 'android' ? row.team_id : null,
      profiles: row.kind !== 'android' ? profiles.map((p) => ({ id: p.id, name: p.name, expires_at: p.expires_at, team_id: p.team_id })) : null,
      revocation: answer,
      // Android keys are self-signed: no issuer to ask. A certificate naming a responder is asked.
      revocable: answer === null ? row.kind !== 'android' : answer.status !== 'not_applicable',
    });
  }

  private async recordOf(row: CertificateRow, profiles: CertificateProfileRow[], liveLinks: number, revocation?: RevocationCheckRow | null): Promise<CertificateRecord> {
    return { certificate: row, profiles, liveLinks, health: await this.health(row, profiles, revocation) };
  }

  /**
   * Attaches another provisioning profile to an iOS enterprise certificate. It must name the
   * certificate; attaching a profile (same UUID) the certificate already holds returns that one.
   */
  async addProfile(principal: Principal, certificateId: string, bytes: Buffer): Promise<{ profile: CertificateProfileRow; created: boolean; warnings: UploadWarning[] }> {
    const certificate = await this.find(principal, certificateId);
    if (certificate.kind === 'android') throw new AppError('invalid_request', `Certificate ${certificate.id} is ${certificate.kind}; provisioning profiles belong to iOS certificates.`, { details: { field: 'profile' } });
    const profile = await this.readProfile(bytes);
    this.checkNamesCertificate(profile, certificate.fingerprint, certificate.subject ?? certificate.id);
    checkProfileKind(profile, certificate.kind);
    const warnings = this.checkProfileDates(profile);
    const { profile: row, created } = await this.options.db.repos.certificateProfiles.add({ accountId: principal.accountId, certificateId: certificate.id, bytes, metadata: metadataOf(profile) });
    return { profile: row, created, warnings };
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

  async profilesOf(certificate: CertificateRow): Promise<CertificateProfileRow[]> {
    if (certificate.kind === 'android') return [];
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
    const profiles = await this.options.db.repos.certificateProfiles.listForCertificates(principal.accountId, rows.filter((r) => r.kind !== 'android').map((r) => r.id));
    const live = await this.options.db.repos.distributions.liveLinksByCertificate(principal.accountId);
    const revocations = await this.options.db.repos.lifecycle.findRevocations(rows.map((r) => r.fingerprint));
    return Promise.all(rows.map(async (row) => this.recordOf(row, await this.complete(profiles.get(row.id) ?? []), live.get(row.id) ?? 0, revocations.get(row.fingerprint) ?? null)));
  }

  async get(principal: Principal, id: string): Promise<CertificateRecord> {
    const row = await this.find(principal, id);
    const live = await this.options.db.repos.distributions.liveLinksByCertificate(principal.accountId);
    return this.recordOf(row, await this.profilesOf(row), live.get(row.id) ?? 0);
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

/**
 * The kind says what the certificate can do, so the profile must be of its type: an ad-hoc
 * profile under ios_enterprise would make every build install only on the devices it lists.
 */
function checkProfileKind(profile: ProfileSummary, kind: CertificateKind): void {
  const expected = PROFILE_TYPE_OF_KIND[kind];
  if (expected === undefined || profile.type === expected) return;
  const suggestion = Object.entries(PROFILE_TYPE_OF_KIND).find(([, type]) => type === profile.type)?.[0];
  throw new AppError(
    'profile_kind_mismatch',
    `The profile "${profile.name ?? profile.uuid}" is ${profile.type ?? 'of an unknown type'}; a ${kind} certificate holds ${expected} profiles.` + (suggestion ? ` Upload it as kind ${suggestion}.` : ' Signet signs with in-house, ad-hoc and development profiles only.'),
    { details: { field: 'profile', profile_type: profile.type, kind } },
  );
}

function metadataOf(profile: ProfileSummary) {
  return { name: profile.name, uuid: profile.uuid, appId: profile.appId, type: profile.type, teamId: profile.teamId, expiresAt: profile.expiresAt, entitlements: profile.entitlements };
}
