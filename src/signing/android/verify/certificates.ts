// Certificate facts the verifier (and the signer's result) report: fingerprint, subject, validity.
import { X509Certificate } from 'node:crypto';
import type { SchemeName, SignerReport } from './report.ts';

export function tryParseCertificate(der: Buffer): X509Certificate | null {
  try {
    return new X509Certificate(der);
  } catch {
    return null;
  }
}

/** The certificate's SHA-256 fingerprint as lower-case hex without separators. */
export function certificateSha256(certificate: X509Certificate): string {
  return certificate.fingerprint256.replaceAll(':', '').toLowerCase();
}

export function describeSigner(scheme: SchemeName, name: string, certificate: X509Certificate, algorithms: readonly string[], now: Date, extra: Partial<SignerReport> = {}): SignerReport {
  const notAfter = new Date(certificate.validTo);
  return {
    scheme,
    name,
    certificateSha256: certificateSha256(certificate),
    subject: certificate.subject.replaceAll('\n', ', '),
    notBefore: new Date(certificate.validFrom).toISOString(),
    notAfter: notAfter.toISOString(),
    expired: notAfter.getTime() < now.getTime(),
    algorithms,
    ...extra,
  };
}
