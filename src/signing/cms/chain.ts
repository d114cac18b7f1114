// Certificate paths: finding a certificate's issuer among candidates, building a path to trusted
// roots (used by the CMS verifier), and completing an Apple signing identity's chain up to Apple's
// root (Apple embeds leaf + intermediate + root: kCMSCertificateChainWithRootOrFail; apps signed
// without the full chain failed on A15 devices, ldid issue #5).
import { SigningError } from '../errors.ts';
import { CertificateMemo } from './certificate-memo.ts';
import { certificateParts, describeCertificate, x509Of } from './certificate.ts';
import { bundledAppleCertificates } from './apple-ca/index.ts';
import { decodePem } from './der.ts';
import type { Identity } from './identity.ts';

// Both checks below verify a signature; every code signature of an app asks them of the same
// chain, so their answers are kept per certificate (pair).
const answers = new CertificateMemo<boolean>(256, 32 * 1024);

/** True when `issuer` issued `subject`: names and key identifiers agree and the signature verifies. */
export function isIssuedBy(subject: Buffer, issuer: Buffer): boolean {
  return answers.get(`issued\0${subject.toString('latin1')}\0${issuer.toString('latin1')}`, () => checkIssued(subject, issuer));
}

function checkIssued(subject: Buffer, issuer: Buffer): boolean {
  try {
    const child = x509Of(subject);
    const parent = x509Of(issuer);
    // OpenSSL X509_check_issued: issuer name == subject's issuer, AKI/SKI consistent, CA key usage.
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false; // undecodable keys (e.g. Ed25519 on OpenSSL 3.0) cannot be part of a path here
  }
}

/**
 * Subject equals issuer and the certificate verifies under its own key. Not isIssuedBy(c, c):
 * OpenSSL's issuer check also wants keyCertSign, which self-signed leaf certificates (Android
 * upload keys, test identities) do not carry.
 */
export function isSelfSigned(certificate: Buffer): boolean {
  return answers.get(`self\0${certificate.toString('latin1')}`, () => checkSelfSigned(certificate));
}

function checkSelfSigned(certificate: Buffer): boolean {
  try {
    const { subject, issuer } = certificateParts(certificate);
    const cert = x509Of(certificate);
    return subject.equals(issuer) && cert.verify(cert.publicKey);
  } catch {
    return false;
  }
}

export interface ChainResult {
  /** True when the path ends at one of the trusted roots. */
  trusted: boolean;
  /** Leaf first, then each issuer found, ending at the trusted root when trusted. */
  path: Buffer[];
  /** Why the path is not trusted. */
  error?: string;
}

/**
 * Builds a path from `leaf` through `intermediates` to one of `roots` (RFC 5280 §6 in its simple
 * form: names, key identifiers and signatures; validity only when `at` is given; no policy or
 * revocation checks — what code-signing tools do offline).
 */
export function buildChain(leaf: Buffer, intermediates: Buffer[], roots: Buffer[], at?: Date): ChainResult {
  const path = [leaf];
  let current = leaf;
  for (let depth = 0; depth < 10; depth++) {
    if (at !== undefined) {
      const info = describeCertificate(current);
      if (at < info.notBefore || at > info.notAfter) {
        return { trusted: false, path, error: `certificate "${info.subjectCommonName ?? info.subject}" is not valid at ${at.toISOString()}` };
      }
    }
    if (roots.some((root) => root.equals(current))) return { trusted: true, path };
    const root = roots.find((candidate) => isIssuedBy(current, candidate));
    if (root) {
      path.push(root);
      return { trusted: true, path };
    }
    if (isSelfSigned(current)) return { trusted: false, path, error: 'the path ends at a self-signed certificate that is not trusted' };
    const next = intermediates.find((candidate) => !path.some((p) => p.equals(candidate)) && isIssuedBy(current, candidate));
    if (!next) {
      const info = describeCertificate(current);
      return { trusted: false, path, error: `no issuer found for "${info.subjectCommonName ?? info.subject}" (issuer ${info.issuer})` };
    }
    path.push(next);
    current = next;
  }
  return { trusted: false, path, error: 'the certificate path is too long' };
}

/** Every certificate in a DER or PEM file (a CA directory entry, a fetched .cer/.der/.crt). */
export function parseCertificateBundle(bytes: Buffer): Buffer[] {
  const text = bytes.subarray(0, 64).toString('latin1');
  if (text.includes('-----BEGIN')) return decodePem(bytes.toString('latin1')).filter((b) => b.label.endsWith('CERTIFICATE')).map((b) => b.der);
  return bytes[0] === 0x30 ? [bytes] : [];
}

export interface CertificateCache {
  get(url: string): Promise<Buffer | undefined>;
  set(url: string, der: Buffer): Promise<void>;
}

export interface CompleteChainOptions {
  /** Certificates from the CA directory (SIGNET_APPLE_CA_DIR), DER; see parseCertificateBundle. */
  caCertificates?: Buffer[];
  /** Also look in Apple's CAs shipped with Signet (apple-ca/); default true. */
  bundled?: boolean;
  /**
   * Downloads a certificate (DER or PEM bytes). Injected so the engine does no network I/O; the
   * service wires a real fetch. Called with the leaf's AIA caIssuers URLs, then Apple's published
   * root URLs.
   */
  fetchCertificate?: (url: string) => Promise<Buffer>;
  /** Remembers fetched certificates by URL so each is downloaded once. */
  cache?: CertificateCache;
}

/** Apple's public root certificates by subject CN (https://www.apple.com/certificateauthority/). */
export const APPLE_ROOT_CERTIFICATE_URLS: Record<string, string> = {
  'Apple Root CA': 'https://www.apple.com/appleca/AppleIncRootCertificate.cer',
  'Apple Root CA - G2': 'https://www.apple.com/certificateauthority/AppleRootCA-G2.cer',
  'Apple Root CA - G3': 'https://www.apple.com/certificateauthority/AppleRootCA-G3.cer',
};

/**
 * Returns the identity with `chain` set to [intermediate(s)…, root], looked up in this order:
 * certificates that came with the key (the .p12), the CA directory, Apple's CAs shipped with
 * Signet (apple-ca/), then downloads. A chain that
 * cannot be completed is an error (certificate_chain_incomplete), never a silent short chain.
 * A self-signed leaf (test identities) is its own root and gets an empty chain.
 */
export async function completeAppleChain(identity: Identity, options: CompleteChainOptions = {}): Promise<Identity> {
  const local = [...identity.chain, ...(options.caCertificates ?? []), ...(options.bundled === false ? [] : bundledAppleCertificates())];
  const chain: Buffer[] = [];
  let current = identity.certificate;
  for (let depth = 0; depth < 8; depth++) {
    if (isSelfSigned(current)) return { ...identity, chain };
    let issuer = local.find((candidate) => isIssuedBy(current, candidate));
    if (!issuer) issuer = await download(current, options);
    if (!issuer) {
      const info = describeCertificate(current);
      throw new SigningError(
        'certificate_chain_incomplete',
        `The chain of "${info.subjectCommonName ?? info.subject}" cannot be completed: its issuer "${info.issuerCommonName ?? info.issuer}" (${info.issuer}) ` +
          `is neither in the keystore, nor among Apple's CAs shipped with Signet, nor in the CA directory` +
          (options.fetchCertificate ? ', and could not be downloaded' : '') +
          '. Put that certificate (DER or PEM) in the folder named by SIGNET_APPLE_CA_DIR, or export the .p12 with its chain.',
        { details: { certificate: info.subject, issuer: info.issuer, caIssuers: info.caIssuers } },
      );
    }
    chain.push(issuer);
    current = issuer;
  }
  throw new SigningError('certificate_chain_incomplete', 'The certificate chain is longer than 8 certificates.');
}

async function download(subject: Buffer, options: CompleteChainOptions): Promise<Buffer | undefined> {
  if (!options.fetchCertificate && !options.cache) return undefined;
  const info = describeCertificate(subject);
  const urls = [...info.caIssuers];
  const rootUrl = info.issuerCommonName === undefined ? undefined : APPLE_ROOT_CERTIFICATE_URLS[info.issuerCommonName];
  if (rootUrl !== undefined) urls.push(rootUrl);
  for (const url of urls) {
    let bytes = await options.cache?.get(url);
    const cached = bytes !== undefined;
    if (bytes === undefined && options.fetchCertificate) {
      try {
        bytes = await options.fetchCertificate(url);
      } catch {
        continue; // an unreachable URL is one missing source among several; the caller reports if all fail
      }
    }
    if (bytes === undefined) continue;
    const issuer = parseCertificateBundle(bytes).find((candidate) => isIssuedBy(subject, candidate));
    if (issuer) {
      if (!cached) await options.cache?.set(url, issuer);
      return issuer;
    }
  }
  return undefined;
}
