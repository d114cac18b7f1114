// Health of a signing identity (an uploaded certificate or a developer account's distribution
// certificate), from its dates, its provisioning profiles and its revocation status. One state
// (the most severe finding) for badges and alerts, with every finding listed and explained.
import type { RevocationCheckRow } from '../db/lifecycle-tables.ts';

export type HealthState = 'ok' | 'expiring' | 'expired' | 'revoked' | 'profile_expired' | 'profile_mismatch' | 'unknown';
export const HEALTH_STATES: readonly HealthState[] = ['ok', 'expiring', 'expired', 'revoked', 'profile_expired', 'profile_mismatch', 'unknown'];

/** Most severe first: a revoked certificate is revoked whatever its dates. */
const SEVERITY: readonly HealthState[] = ['revoked', 'expired', 'profile_expired', 'profile_mismatch', 'unknown', 'expiring', 'ok'];

export interface HealthFinding {
  state: Exclude<HealthState, 'ok'>;
  reason: string;
}

export interface RevocationView {
  /** good | revoked | unknown (the responder's answers), unchecked, not_applicable, error. */
  status: RevocationCheckRow['status'];
  responder: string | null;
  checked_at: string | null;
  /** The cached answer is used until then. */
  next_update: string | null;
  revoked_at: string | null;
  revocation_reason: string | null;
  reason: string | null;
}

export interface HealthView {
  state: HealthState;
  /** Why, for the state shown (null when ok). */
  reason: string | null;
  /** Every finding, most severe first. */
  findings: HealthFinding[];
  /** The earliest date something stops working (certificate or a profile expires). */
  expires_at: string | null;
  revocation: RevocationView | null;
}

export interface ProfileFacts {
  id: string;
  name: string | null;
  expires_at: string | null;
  team_id: string | null;
}

export interface HealthInput {
  now: Date;
  /** expiring when something expires within this many days. */
  expiringDays: number;
  notAfter: string | null;
  teamId: string | null;
  /** iOS certificates: its provisioning profiles (null: the identity holds none, e.g. Android). */
  profiles: readonly ProfileFacts[] | null;
  revocation: RevocationCheckRow | null;
  /** Whether a revocation status applies (false: self-signed Android keys). */
  revocable: boolean;
  /** Findings the caller knows of (e.g. a developer account whose profiles name an older certificate). */
  extra?: readonly HealthFinding[];
}

const day = 86400_000;
const date = (iso: string) => iso.slice(0, 10);

export function revocationView(row: RevocationCheckRow | null): RevocationView | null {
  if (row === null) return null;
  return { status: row.status, responder: row.ocsp_url, checked_at: row.checked_at, next_update: row.next_update, revoked_at: row.revoked_at, revocation_reason: row.revocation_reason, reason: row.reason };
}

export function computeHealth(input: HealthInput): HealthView {
  const now = input.now.getTime();
  const soon = now + input.expiringDays * day;
  const findings: HealthFinding[] = [...(input.extra ?? [])];
  const expiries: string[] = [];

  if (input.notAfter !== null) {
    expiries.push(input.notAfter);
    const at = Date.parse(input.notAfter);
    if (at <= now) findings.push({ state: 'expired', reason: `The certificate expired on ${date(input.notAfter)}.` });
    else if (at <= soon) findings.push({ state: 'expiring', reason: `The certificate expires on ${date(input.notAfter)} (in ${Math.ceil((at - now) / day)} days).` });
  }

  const revocation = input.revocation;
  if (revocation?.status === 'revoked') {
    findings.push({ state: 'revoked', reason: `The certificate was revoked${revocation.revoked_at ? ` on ${date(revocation.revoked_at)}` : ''}${revocation.revocation_reason ? ` (${revocation.revocation_reason})` : ''}, as its OCSP responder answered.` });
  } else if (input.revocable) {
    if (revocation === null || revocation.status === 'unchecked') findings.push({ state: 'unknown', reason: 'Revocation has not been checked yet.' });
    else if (revocation.status === 'error' || revocation.status === 'unknown') findings.push({ state: 'unknown', reason: revocation.reason ?? 'The OCSP responder gave no status.' });
  }

  if (input.profiles !== null) {
    if (input.profiles.length === 0) findings.push({ state: 'profile_mismatch', reason: 'The certificate has no provisioning profile; attach one to sign with it.' });
    for (const profile of input.profiles) {
      const label = `The provisioning profile "${profile.name ?? profile.id}"`;
      if (profile.expires_at !== null) {
        expiries.push(profile.expires_at);
        const at = Date.parse(profile.expires_at);
        if (at <= now) findings.push({ state: 'profile_expired', reason: `${label} expired on ${date(profile.expires_at)}.` });
        else if (at <= soon) findings.push({ state: 'expiring', reason: `${label} expires on ${date(profile.expires_at)} (in ${Math.ceil((at - now) / day)} days).` });
      }
      if (profile.team_id !== null && input.teamId !== null && profile.team_id !== input.teamId) {
        findings.push({ state: 'profile_mismatch', reason: `${label} belongs to team ${profile.team_id}, the certificate to team ${input.teamId}.` });
      }
    }
  }

  findings.sort((a, b) => SEVERITY.indexOf(a.state) - SEVERITY.indexOf(b.state));
  const first = findings[0];
  expiries.sort();
  return { state: first?.state ?? 'ok', reason: first?.reason ?? null, findings, expires_at: expiries[0] ?? null, revocation: revocationView(revocation) };
}

/** Whether a certificate in this state may be chosen by default or used to sign. */
export function blocksSigning(view: HealthView): boolean {
  return view.findings.some((f) => f.state === 'revoked' || f.state === 'expired');
}
