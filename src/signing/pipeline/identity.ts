// Opening the signing identity, one way for every path: load the key file, then complete the
// certificate chain from the key file's own certificates, the CA certificates of the settings
// (SIGNET_APPLE_CA_DIR, `--ca-dir`) and Apple's CAs shipped with Signet (cms/apple-ca). A chain
// that still cannot be completed fails with certificate_chain_incomplete naming the missing issuer.
import { completeAppleChain, describeCertificate, isExpired, loadIdentity, parseCertificateBundle, type Identity } from '../cms/index.ts';
import { toBuffer } from './bytes.ts';
import type { IosSignRequest, SignedIdentity, SignEnv, SigningSettings } from './types.ts';

/** The DER certificates of the settings' CA files (each DER or PEM, possibly several per file). */
export function settingsCaCertificates(settings: SigningSettings): Buffer[] {
  return (settings.caCertificates ?? []).flatMap((bytes) => parseCertificateBundle(toBuffer(bytes)));
}

/** An iOS signing identity with its chain completed up to Apple's (or the configured) root. */
export async function openSigningIdentity(source: IosSignRequest['identity'], env: SignEnv): Promise<Identity> {
  const identity = 'opened' in source ? source.opened : await (env.loadIdentity ?? loadIdentity)(toBuffer(source.p12), source.password === undefined ? {} : { password: source.password });
  return completeAppleChain(identity, { caCertificates: settingsCaCertificates(env) });
}

export function describeIdentity(identity: Identity, now: Date): SignedIdentity {
  const info = describeCertificate(identity.certificate);
  return {
    subject: info.subject,
    commonName: info.subjectCommonName ?? null,
    teamId: info.teamId ?? null,
    sha256: info.sha256,
    notAfter: info.notAfter,
    expired: isExpired(identity.certificate, now),
    chain: identity.chain.map((c) => describeCertificate(c).subject),
  };
}
