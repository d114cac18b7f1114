// Certificates: validated on upload (the password must open the file, the key must match its
// certificate, an iOS profile must name the certificate), then sealed at rest by the repository.
// Listings show metadata only; the secrets are opened only by the worker right before signing.
import { createHash, X509Certificate } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { collectRows } from '../db/repositories/pagination.ts';
import type { CertificateKind } from '../db/schema.ts';
import { AppError, errorCodeOf } from '../errors.ts';
import { SigningError } from '../signing/errors.ts';
import type { Principal } from './principal.ts';
import { certificateView, type CertificateView } from './views.ts';

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
  /** Application identifier, e.g. "TEAMID.com.example.*". */
  appId: string | null;
  /** "enterprise" | "ad-hoc" | "development" | "app-store". */
  type: string | null;
  expiresAt: Date | null;
  teamId: string | null;
  /** DeveloperCertificates, DER. */
  certificates: Buffer[];
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

  async create(principal: Principal, input: CertificateInput): Promise<CertificateView> {
    const identity = await this.load(input);
    const cert = new X509Certificate(identity.certificate);
    const fingerprint = createHash('sha256').update(identity.certificate).digest('hex');
    let profile: ProfileSummary | null = null;
    if (input.kind === 'ios_enterprise') {
      profile = await this.readProfile(input.profile);
      const named = profile.certificates.some((der) => createHash('sha256').update(der).digest('hex') === fingerprint);
      if (!named) {
        throw new SigningError('profile_certificate_mismatch', `The profile "${profile.name ?? '?'}" does not include the certificate ${subjectLine(cert)}.`);
      }
    }
    const row = await this.options.db.repos.certificates.create({
      accountId: principal.accountId,
      kind: input.kind as CertificateKind,
      name: input.name,
      material: input.file.data,
      certificate: input.kind === 'android' ? input.certificate : null,
      password: input.password,
      keyPassword: input.kind === 'android' ? input.keyPassword : null,
      keyAlias: input.kind === 'android' ? (input.alias ?? identity.alias ?? null) : null,
      profile: input.kind === 'ios_enterprise' ? input.profile : null,
      metadata: {
        subject: subjectLine(cert),
        teamId: profile?.teamId ?? subjectAttribute(cert, 'OU'),
        fingerprint,
        notBefore: new Date(cert.validFrom),
        notAfter: new Date(cert.validTo),
        profileName: profile?.name ?? null,
        profileAppId: profile?.appId ?? null,
        profileType: profile?.type ?? null,
        profileExpiresAt: profile?.expiresAt ?? null,
      },
    });
    return certificateView(row);
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

  async list(principal: Principal): Promise<CertificateView[]> {
    const live = await this.options.db.repos.distributions.liveLinksByCertificate(principal.accountId);
    return collectRows((page) => this.options.db.repos.certificates.list(principal.accountId, page), (row) => certificateView(row, live.get(row.id) ?? 0));
  }

  async get(principal: Principal, id: string): Promise<CertificateView> {
    const row = await this.options.db.repos.certificates.find(principal.accountId, id);
    if (!row) throw new AppError('certificate_not_found', `No certificate ${id}.`);
    const live = await this.options.db.repos.distributions.liveLinksByCertificate(principal.accountId);
    return certificateView(row, live.get(row.id) ?? 0);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.options.db.repos.certificates.delete(principal.accountId, id))) {
      throw new AppError('certificate_not_found', `No certificate ${id}.`);
    }
  }
}
