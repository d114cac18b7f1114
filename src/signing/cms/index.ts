// Public surface of the keys/certificates/CMS engine, shared by the iOS and Android signers and
// the service. Import from here, not from the individual files. See SPECIFICATION.md.
export { classifyKey, keyMatchesCertificate, type Curve, type Identity, type KeyType } from './identity.ts';
export { detectIdentityFormat, loadIdentity, type IdentityFormat, type LoadIdentityOptions } from './load-identity.ts';
export { readJks, recoverJksKey, type JksEntry } from './jks.ts';
export { openPkcs12, type Pkcs12Bag, type Pkcs12Contents } from './pkcs12.ts';
export { readCertificates } from './private-key.ts';
export { certificateParts, describeCertificate, isExpired, x509Of, type CertificateInfo } from './certificate.ts';
export { estimateSignatureSize, issuerAndSerialNumber, maxSignatureLength, signAttached, signDetached, type SignOptions, type SignedAttribute } from './cms-build.ts';
export { appleCdHashAttributes, cdHashesPlist, estimateCodeSignatureSize, parseCdHashesPlist, signCodeDirectory, type CodeDirectoryHash, type CodeSignatureOptions } from './apple-code-signature.ts';
export { signJarSignatureBlock, type JarSignatureOptions } from './jar-signature.ts';
export { parseSignedData, type ParsedAttribute, type ParsedSignedData, type ParsedSignerInfo } from './cms-parse.ts';
export { verifySignedData, type VerifiedSignedAttributes, type VerifiedSignedData, type VerifyOptions } from './cms-verify.ts';
export { APPLE_ROOT_CERTIFICATE_URLS, buildChain, completeAppleChain, isIssuedBy, isSelfSigned, parseCertificateBundle, type CertificateCache, type ChainResult, type CompleteChainOptions } from './chain.ts';
export { BUNDLED_APPLE_CAS, bundledAppleCertificates, type BundledAppleCa } from './apple-ca/index.ts';
export { readCaDirectory } from './ca-directory.ts';
export { OID, decodePem, digestFromOid, encodePem, type DigestAlgorithm } from './der.ts';
