// The worker's periodic certificate check (daily by default): asks OCSP again for every
// certificate and developer account whose cached answer has run out, recomputes each one's health
// from its dates, profiles and revocation, and records it; a recorded change is reported once
// (compare-and-set in the repository), so several workers checking together announce it once.
import type { Db } from '../db/database.ts';
import type { CertificateRow } from '../db/schema.ts';
import type { DeveloperAccountRow } from '../db/super-tables.ts';
import type { CertificateService, IdentityLoader } from './certificates.ts';
import type { HealthView } from './certificate-health.ts';
import type { DeveloperAccountService } from './developer-accounts.ts';
import type { Logger } from './logger.ts';
import type { AccountEventService, AccountEventType } from './account-events.ts';
import type { RevocationService } from './revocation.ts';

export type HealthChange =
  | { subject: 'certificate'; row: CertificateRow; health: HealthView; previous: string | null }
  | { subject: 'developer_account'; row: DeveloperAccountRow; health: HealthView; previous: string | null };

export interface LifecycleMonitorOptions {
  db: Db;
  revocation: RevocationService;
  certificates: CertificateService;
  developerAccounts: DeveloperAccountService;
  /** Opens a stored identity to find its issuer (certificates registered before migration 0010). */
  loadIdentity: IdentityLoader;
  logger: Logger;
  /** Period of the check (default one day). */
  intervalMs?: number;
  /** Where changes are announced (account events and webhooks). */
  events?: AccountEventService;
  now?: () => Date;
}

/** Developer-account states worth an alert (unknown and expiring are not: they flap or are early). */
const UNHEALTHY = new Set(['expired', 'revoked', 'key_rejected', 'agreement_required']);

/**
 * The state recorded for a developer account: its certificate's health, unless Apple refused the
 * account itself (key rejected, agreements to accept), which matters as much.
 */
function accountState(row: DeveloperAccountRow, health: HealthView): string {
  if (health.state === 'ok' || health.state === 'expiring' || health.state === 'unknown') {
    if (row.health === 'key_rejected' || row.health === 'agreement_required') return row.health;
  }
  return health.state;
}

/** The event a recorded change announces, if any. */
export function eventFor(change: HealthChange, state: string): { accountId: string; type: AccountEventType; subjectId: string; data: unknown } | null {
  const { row, health, previous } = change;
  if (change.subject === 'certificate') {
    if (state !== 'expiring' && state !== 'expired' && state !== 'revoked') return null;
    const certificate = change.row;
    return {
      accountId: row.account_id,
      type: `certificate.${state}`,
      subjectId: row.id,
      data: { certificate: { id: certificate.id, name: certificate.name, kind: certificate.kind, subject: certificate.subject, fingerprint: certificate.fingerprint, not_after: certificate.not_after }, health, previous_state: previous },
    };
  }
  if (!UNHEALTHY.has(state)) return null;
  const account = change.row;
  return {
    accountId: row.account_id,
    type: 'developer_account.unhealthy',
    subjectId: row.id,
    data: { developer_account: { id: account.id, name: account.name, team_id: account.team_id, health: account.health, health_detail: account.health_detail }, state, certificate_health: health, previous_state: previous },
  };
}

export class LifecycleMonitor {
  private readonly options: LifecycleMonitorOptions;

  constructor(options: LifecycleMonitorOptions) {
    this.options = options;
  }

  /** One pass over every certificate and developer account; returns how many changed health. */
  async checkAll(): Promise<{ checked: number; changed: number }> {
    let checked = 0;
    let changed = 0;
    for (const row of await this.options.db.repos.lifecycle.allCertificates()) {
      try {
        if (await this.checkCertificate(row)) changed++;
        checked++;
      } catch (error) {
        this.options.logger.error({ err: error, certificate_id: row.id }, 'certificate health check failed');
      }
    }
    for (const row of await this.options.db.repos.lifecycle.allDeveloperAccounts()) {
      try {
        if (await this.checkDeveloperAccount(row)) changed++;
        checked++;
      } catch (error) {
        this.options.logger.error({ err: error, developer_account_id: row.id }, 'developer account health check failed');
      }
    }
    return { checked, changed };
  }

  /** Re-checks one certificate; true when its recorded health changed. */
  async checkCertificate(row: CertificateRow, options: { force?: boolean } = {}): Promise<boolean> {
    const { db, revocation, certificates } = this.options;
    const stored = await revocation.find(row.fingerprint);
    if (stored === null) {
      const profiles = row.kind !== 'android' ? await certificates.profilesOf(row) : [];
      if (profiles.length > 0) {
        // Registered before revocation was tracked: open the sealed identity once to find its issuer.
        const credential = db.repos.certificates.credential(row, profiles.map((p) => ({ id: p.id, bytes: db.repos.certificateProfiles.open(p) })));
        if (credential.kind === 'ios_enterprise') {
          const identity = await this.options.loadIdentity(credential.p12, { password: credential.password });
          await revocation.check(identity.certificate, identity.chain ?? []);
        }
      }
    } else {
      await revocation.refresh(stored, options);
    }
    const health = await certificates.health(row, await certificates.profilesOf(row));
    return this.record({ subject: 'certificate', row, health, previous: null });
  }

  /** Re-checks one developer account's distribution certificate; true when its health changed. */
  async checkDeveloperAccount(row: DeveloperAccountRow, options: { force?: boolean } = {}): Promise<boolean> {
    const { db, revocation, developerAccounts } = this.options;
    const stored = await revocation.find(row.certificate_fingerprint);
    if (stored === null) {
      const secrets = db.repos.developerAccounts.secrets(row);
      const identity = await this.options.loadIdentity(secrets.p12, { password: secrets.p12Password });
      await revocation.check(identity.certificate, identity.chain ?? []);
    } else {
      await revocation.refresh(stored, options);
    }
    const health = await developerAccounts.certificateHealth(row);
    return this.record({ subject: 'developer_account', row, health, previous: null }, accountState(row, health));
  }

  private async record(change: HealthChange, state: string = change.health.state): Promise<boolean> {
    const table = change.subject === 'certificate' ? 'certificates' : 'developer_accounts';
    const now = this.options.now?.() ?? new Date();
    const { changed, previous } = await this.options.db.repos.lifecycle.recordHealth(table, change.row.id, state, now);
    if (!changed) return false;
    this.options.logger.info({ [`${change.subject}_id`]: change.row.id, from: previous, to: state, reason: change.health.reason }, 'health changed');
    const event = eventFor({ ...change, previous }, state);
    if (event !== null) await this.options.events?.emit(event);
    return true;
  }

  /** Checks now and then every intervalMs; the returned stop resolves once a pass in progress ends. */
  start(): () => Promise<void> {
    let running: Promise<unknown> | null = null;
    const tick = () => {
      running ??= this.checkAll()
        .catch((error: unknown) => this.options.logger.error({ err: error }, 'certificate health check failed'))
        .finally(() => (running = null));
    };
    tick();
    const timer = setInterval(tick, this.options.intervalMs ?? 86400_000);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await running;
    };
  }
}
