// Revocation status of signing certificates by OCSP (engine: src/signing/ocsp). A certificate is
// registered when it is uploaded (its DER, its issuer, its responder URL) and asked about then and
// whenever its cached answer runs out: an answer is reused until its nextUpdate, and one without
// a nextUpdate until the next periodic check. Asking never concludes `revoked` from a failure: a
// responder that times out, cannot be reached or answers something Signet cannot trust leaves the
// status `error` (shown as health `unknown`, with the reason), and a certificate an earlier signed
// answer called revoked stays revoked (revocation is final, RFC 5280 §5.3.1 certificateHold aside).
import { createHash } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { RevocationCheckRow } from '../db/lifecycle-tables.ts';
import { OutboundAllowList, exchangeOutbound, type OutboundOptions } from './outbound.ts';

export interface RevocationServiceOptions {
  db: Db;
  outbound?: OutboundOptions;
  /** CA certificates the issuer may be among (SIGNET_APPLE_CA_DIR), DER. */
  caCertificates?: () => Promise<Buffer[]>;
  /** Per request to a responder or CA (default 5 s). */
  timeoutMs?: number;
  /** How long an answer without nextUpdate, or a failure, is kept before asking again (default 1 day). */
  recheckMs?: number;
  now?: () => Date;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

export const fingerprintOf = (der: Buffer): string => createHash('sha256').update(der).digest('hex');

export class RevocationService {
  private readonly options: RevocationServiceOptions;
  private readonly now: () => Date;
  /** One check at a time per certificate in this process (an upload and the periodic job may meet). */
  private readonly inFlight = new Map<string, Promise<RevocationCheckRow>>();

  constructor(options: RevocationServiceOptions) {
    this.options = options;
    this.now = options.now ?? (() => new Date());
  }

  get recheckMs(): number {
    return this.options.recheckMs ?? 86400_000;
  }

  /** The stored status of a certificate, or null when it was never registered. */
  find(fingerprint: string): Promise<RevocationCheckRow | null> {
    return this.options.db.repos.lifecycle.findRevocation(fingerprint);
  }

  /** Whether the stored answer has run out (nextUpdate passed, or the recheck period without one). */
  isDue(row: RevocationCheckRow): boolean {
    if (row.status === 'not_applicable') return false;
    const now = this.now().getTime();
    if (row.checked_at === null) return true;
    if ((row.status === 'good' || row.status === 'unknown' || row.status === 'revoked') && row.next_update !== null) return Date.parse(row.next_update) <= now;
    return Date.parse(row.checked_at) + this.recheckMs <= now;
  }

  /**
   * Registers `certificate` (issued by one of `chain`, the CA directory, or its AIA caIssuers
   * download) and asks its responder unless a valid answer is cached (`force` asks anyway).
   */
  async check(certificate: Buffer, chain: readonly Buffer[] = [], options: { force?: boolean } = {}): Promise<RevocationCheckRow> {
    const fingerprint = fingerprintOf(certificate);
    const running = this.inFlight.get(fingerprint);
    if (running) return running;
    const work = this.run(fingerprint, certificate, chain, options.force ?? false).finally(() => this.inFlight.delete(fingerprint));
    this.inFlight.set(fingerprint, work);
    return work;
  }

  /** Asks again for a registered certificate whose answer is due; returns the stored row. */
  async refresh(row: RevocationCheckRow, options: { force?: boolean } = {}): Promise<RevocationCheckRow> {
    if (!options.force && !this.isDue(row)) return row;
    return this.check(Buffer.from(row.certificate_der, 'base64'), row.issuer_der === null ? [] : [Buffer.from(row.issuer_der, 'base64')], { force: true });
  }

  private async run(fingerprint: string, certificate: Buffer, chain: readonly Buffer[], force: boolean): Promise<RevocationCheckRow> {
    const { db } = this.options;
    const stored = await db.repos.lifecycle.findRevocation(fingerprint);
    if (stored !== null && !force && !this.isDue(stored)) return stored;
    // The OCSP and CMS code (pkijs, asn1js: ~700 KB of source) loads on the first check, not at server start.
    const { buildOcspRequest, ocspResponderUrls, readOcspResponse } = await import('../signing/ocsp/index.ts');
    const nowIso = this.now().toISOString();
    const row: RevocationCheckRow = stored ?? {
      fingerprint,
      certificate_der: certificate.toString('base64'),
      issuer_der: null,
      ocsp_url: null,
      status: 'unchecked',
      reason: null,
      checked_at: null,
      this_update: null,
      next_update: null,
      revoked_at: null,
      revocation_reason: null,
      created_at: nowIso,
    };
    const urls = ocspResponderUrls(certificate);
    row.ocsp_url = urls[0] ?? null;
    if (urls.length === 0) {
      Object.assign(row, { status: 'not_applicable', reason: 'The certificate names no OCSP responder (Authority Information Access).', checked_at: nowIso });
      await db.repos.lifecycle.saveRevocation(row);
      return row;
    }
    const issuer = row.issuer_der !== null ? Buffer.from(row.issuer_der, 'base64') : await this.findIssuer(certificate, chain);
    if (issuer === null) {
      this.failed(row, 'The issuing CA certificate was found neither with the key, nor in SIGNET_APPLE_CA_DIR, nor at the certificate\'s caIssuers URL; revocation cannot be checked.', nowIso);
      await db.repos.lifecycle.saveRevocation(row);
      return row;
    }
    row.issuer_der = issuer.toString('base64');
    const errors: string[] = [];
    for (const url of urls) {
      try {
        const request = buildOcspRequest(certificate, issuer);
        const response = await exchangeOutbound(
          url,
          { method: 'POST', headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response', 'user-agent': 'Signet-OCSP/1' }, body: request.der, signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000), maxBytes: MAX_RESPONSE_BYTES },
          this.outbound(),
        );
        if (response.status !== 200) throw new Error(`the responder answered HTTP ${response.status}`);
        const answer = readOcspResponse(response.body, { certId: request.certId, issuer, nonce: request.nonce, now: this.now() });
        Object.assign(row, {
          status: answer.status,
          reason: answer.status === 'unknown' ? `The responder ${new URL(url).host} does not know this certificate (OCSP status unknown).` : null,
          checked_at: nowIso,
          this_update: answer.thisUpdate.toISOString(),
          next_update: answer.nextUpdate?.toISOString() ?? null,
          revoked_at: answer.revokedAt?.toISOString() ?? null,
          revocation_reason: answer.revocationReason,
        });
        await db.repos.lifecycle.saveRevocation(row);
        return row;
      } catch (error) {
        errors.push(`${url}: ${describe(error)}`);
      }
    }
    this.failed(row, `Revocation could not be checked: ${errors.join('; ')}`, nowIso);
    await db.repos.lifecycle.saveRevocation(row);
    return row;
  }

  /** A failed check: never `revoked` by itself, and a revocation already seen stays. */
  private failed(row: RevocationCheckRow, reason: string, nowIso: string): void {
    row.checked_at = nowIso;
    if (row.status === 'revoked') return;
    row.status = 'error';
    row.reason = reason.slice(0, 1000);
  }

  private outbound(): OutboundOptions {
    return this.options.outbound ?? { allow: new OutboundAllowList('') };
  }

  private async findIssuer(certificate: Buffer, chain: readonly Buffer[]): Promise<Buffer | null> {
    const { describeCertificate, isIssuedBy, parseCertificateBundle } = await import('../signing/cms/index.ts');
    const local = [...chain, ...((await this.options.caCertificates?.()) ?? [])];
    const found = local.find((candidate) => isIssuedBy(certificate, candidate));
    if (found) return found;
    // Keychain exports carry the leaf only: download the issuer it names (RFC 5280 §4.2.2.1).
    for (const url of describeCertificate(certificate).caIssuers) {
      try {
        const response = await exchangeOutbound(url, { method: 'GET', headers: { 'user-agent': 'Signet-OCSP/1' }, signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000), maxBytes: MAX_RESPONSE_BYTES }, this.outbound());
        if (response.status !== 200) continue;
        const issuer = parseCertificateBundle(response.body).find((candidate) => isIssuedBy(certificate, candidate));
        if (issuer) return issuer;
      } catch {
        // one unreachable source; the caller reports when none worked
      }
    }
    return null;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'no answer in time (timed out)';
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? `unreachable (${code})` : error.message;
}
