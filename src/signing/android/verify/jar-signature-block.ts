// Checking a v1 signature block (META-INF/*.RSA|EC|DSA): a PKCS#7 SignedData (RFC 2315 / RFC 5652)
// detached over the .SF file, as apksig V1SchemeVerifier does it: the signer's certificate found
// by issuer (compared as an X.500 name, RFC 5280 §7.1) and serial number, and either a signature
// over the .SF bytes, or - when signed attributes are present - a message-digest attribute equal
// to the .SF digest and a signature over the DER SET of attributes (RFC 5652 §5.4). The shared
// CMS verifier (src/signing/cms) does all of it; every SignerInfo must verify, where apksig
// from API 24 settles for the first one that does (APKs carry a single SignerInfo).
import { X509Certificate } from 'node:crypto';
import { verifySignedData } from '../../cms/cms-verify.ts';
import { OID } from '../../cms/der.ts';
import { SigningError } from '../../errors.ts';

export type JarBlockResult =
  | { ok: true; certificate: X509Certificate; certificateDer: Buffer; digest: string }
  | { ok: false; reason: string };

export function checkJarSignatureBlock(block: Buffer, signatureFile: Buffer): JarBlockResult {
  let verified;
  try {
    verified = verifySignedData(block, { detachedContent: signatureFile });
  } catch (error) {
    if (error instanceof SigningError) return { ok: false, reason: error.message };
    throw error;
  }
  // With signed attributes, the content-type attribute (which the CMS verifier matched with the
  // encapsulated type) must say plain data, as jarsigner and apksig write it.
  if (verified.signedAttributes !== undefined && verified.contentType !== OID.data) return { ok: false, reason: `the signature block's content type is ${verified.contentType}, not id-data` };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(verified.signerCertificate);
  } catch {
    return { ok: false, reason: "the signer's certificate cannot be parsed" };
  }
  return { ok: true, certificate, certificateDer: verified.signerCertificate, digest: verified.digestAlgorithm };
}
