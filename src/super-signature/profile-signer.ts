// Signs the request profile so iOS shows it as "Verified" (distribution-protocols.md §3.1.2):
// CMS SignedData, content attached, DER, by a certificate iOS trusts (the server's TLS
// certificate or SIGNET_PROFILE_SIGNING_CERT) with the full chain embedded, as
// `openssl smime -sign -nodetach -outform der -certfile chain.pem` makes it. Without a signer the
// profile is served unsigned: it still works, with a red "Not Signed" screen.
import { createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { classifyKey, decodePem, signAttached, type Identity } from '../signing/cms/index.ts';

export interface ProfileSigner {
  /** The signed CMS (DER) wrapping `payload`. */
  sign(payload: Buffer): Buffer;
  /** The signing certificate (DER). */
  readonly certificate: Buffer;
}

/** An Identity from a PEM certificate chain (leaf first) and a PEM private key. */
export function identityFromPem(chainPem: string, keyPem: string): Identity {
  const certificates = decodePem(chainPem).filter((block) => block.label === 'CERTIFICATE').map((block) => block.der);
  const [leaf, ...chain] = certificates;
  if (leaf === undefined) throw new Error('the profile signing certificate file holds no PEM CERTIFICATE');
  const privateKey = createPrivateKey({ key: keyPem, format: 'pem' });
  return { privateKey, ...classifyKey(privateKey), certificate: leaf, chain };
}

export function profileSigner(identity: Identity): ProfileSigner {
  return {
    certificate: identity.certificate,
    sign: (payload) =>
      signAttached({
        content: payload,
        digestAlgorithm: 'sha256',
        signer: identity,
        certificates: [identity.certificate, ...identity.chain],
        withSignedAttributes: true,
      }),
  };
}

/** Reads SIGNET_PROFILE_SIGNING_CERT/KEY, else the TLS pair, else null (unsigned profiles). */
export async function loadProfileSigner(files: { certFile: string; keyFile: string } | null): Promise<ProfileSigner | null> {
  if (files === null) return null;
  const [chain, key] = await Promise.all([readFile(files.certFile, 'utf8'), readFile(files.keyFile, 'utf8')]);
  return profileSigner(identityFromPem(chain, key));
}
