// Certificate facts the verifier reports (fingerprint, subject, validity) from DER.
import { X509Certificate } from 'node:crypto';
import type { SchemeName, SignerReport } from './report.ts';

export function tryParseCertificate(der: Buffer): X509Certificate | null {
  try {
    return new X509Certificate(der);
  } catch {
    return null;
  }
}

export function describeSigner(scheme: SchemeName, name: string, certificate: X509Certificate, algorithms: readonly string[], now: Date, extra: Partial<SignerReport> = {}): SignerReport {
  const notAfter = new Date(certificate.validTo);
  return {
    scheme,
    name,
    certificateSha256: certificate.fingerprint256.replaceAll(':', '').toLowerCase(),
    subject: certificate.subject.replaceAll('\n', ', '),
    notBefore: new Date(certificate.validFrom).toISOString(),
    notAfter: notAfter.toISOString(),
    expired: notAfter.getTime() < now.getTime(),
    algorithms,
    ...extra,
  };
}
