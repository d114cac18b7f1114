// Apple's public certificate authorities, shipped with Signet so that a .p12 holding only the
// leaf certificate and its key (what Keychain Access exports by default) still signs with the
// full chain Apple requires (kCMSCertificateChainWithRootOrFail). The DER files beside this one
// are Apple's own, as published at https://www.apple.com/certificateauthority/ (see README.md for
// provenance); test/signing/cms/apple-ca.test.ts pins each one's SHA-256 fingerprint.
import { readFileSync } from 'node:fs';

export interface BundledAppleCa {
  file: string;
  /** Subject common name (with the generation where Apple puts it in OU). */
  name: string;
  role: 'root' | 'intermediate';
}

export const BUNDLED_APPLE_CAS: readonly BundledAppleCa[] = [
  { file: 'AppleIncRootCertificate.cer', name: 'Apple Root CA', role: 'root' },
  { file: 'AppleRootCA-G2.cer', name: 'Apple Root CA - G2', role: 'root' },
  { file: 'AppleRootCA-G3.cer', name: 'Apple Root CA - G3', role: 'root' },
  { file: 'AppleWWDRCA.cer', name: 'Apple Worldwide Developer Relations Certification Authority (G1)', role: 'intermediate' },
  { file: 'AppleWWDRCAG2.cer', name: 'Apple Worldwide Developer Relations CA - G2', role: 'intermediate' },
  { file: 'AppleWWDRCAG3.cer', name: 'Apple Worldwide Developer Relations Certification Authority (G3)', role: 'intermediate' },
  { file: 'AppleWWDRCAG4.cer', name: 'Apple Worldwide Developer Relations Certification Authority (G4)', role: 'intermediate' },
  { file: 'AppleWWDRCAG5.cer', name: 'Apple Worldwide Developer Relations Certification Authority (G5)', role: 'intermediate' },
  { file: 'AppleWWDRCAG6.cer', name: 'Apple Worldwide Developer Relations Certification Authority (G6)', role: 'intermediate' },
  { file: 'AppleWWDRCAG7.cer', name: 'Apple Worldwide Developer Relations Certification Authority (G7)', role: 'intermediate' },
  { file: 'AppleWWDRCAG8.cer', name: 'Apple Worldwide Developer Relations Certification Authority (G8)', role: 'intermediate' },
];

let loaded: Buffer[] | null = null;

/** The bundled certificates (DER), intermediates first; read on first use, then kept. */
export function bundledAppleCertificates(): Buffer[] {
  loaded ??= [...BUNDLED_APPLE_CAS]
    .sort((a, b) => (a.role === b.role ? 0 : a.role === 'intermediate' ? -1 : 1))
    // The folder as one literal URL, which bin/signet's bundle resolves to here (scripts/build-server.ts).
    .map((ca) => readFileSync(new URL(ca.file, new URL('./', import.meta.url))));
  return loaded;
}
