// Public surface of the OCSP engine (revocation status of signing certificates). See SPECIFICATION.md.
export { certIdFor, sameCertId, type CertIdParts } from './cert-id.ts';
export { OCSP_OID, buildOcspRequest, ocspResponderUrls, type BuiltOcspRequest } from './ocsp-request.ts';
export { readOcspResponse, type OcspAnswer, type OcspCertStatus, type ReadOcspOptions } from './ocsp-response.ts';
