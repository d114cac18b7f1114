// Checking one v2, v3 or v3.1 block (apksig V2SchemeVerifier / V3SchemeVerifier.parseSigner): for
// each signer, the strongest supported signature per platform level verifies over the signed
// data with the signer's public key, the first certificate carries that key, the digest and
// signature lists name the same algorithms, v3 SDK ranges agree, the lineage verifies. The
// content digests themselves are compared by the caller, once for all schemes.
import { X509Certificate } from 'node:crypto';
import { SigningError } from '../../errors.ts';
import { digestStrength, signatureAlgorithmById, verifyWith, type ContentDigestAlgorithm, type SignatureAlgorithm } from '../algorithms.ts';
import { PROOF_OF_ROTATION_ATTR_ID, ROTATION_MIN_SDK_ATTR_ID, ROTATION_ON_DEV_RELEASE_ATTR_ID, V2_STRIPPING_PROTECTION_ATTR_ID } from '../block/constants.ts';
import { parseLineage, type LineageNode } from '../lineage/lineage.ts';
import { parseSchemeBlock } from '../schemes/parse.ts';
import type { Scheme, SchemeSigner } from '../schemes/types.ts';
import type { Findings } from './report.ts';

export interface VerifiedSigner {
  readonly index: number;
  readonly certificate: X509Certificate;
  readonly certificateDer: Buffer;
  readonly algorithms: readonly SignatureAlgorithm[];
  /** Content digests the verified signatures vouch for, by content digest algorithm. */
  readonly contentDigests: ReadonlyMap<ContentDigestAlgorithm, Buffer>;
  readonly minSdk: number | null;
  readonly maxSdk: number | null;
  readonly lineage: readonly LineageNode[] | null;
}

export interface SchemeCheck {
  readonly scheme: Scheme;
  /** Signers that passed every structural and signature check. */
  readonly signers: readonly VerifiedSigner[];
  /** v2: scheme IDs the 0xbeeff00d attribute says must also be present. */
  readonly requiredSchemes: ReadonlySet<number>;
  /** v3: rotation-min-sdk attribute (0x559f8b02): a v3.1 block must exist for that level. */
  readonly rotationMinSdk: number | null;
  readonly ok: boolean;
}

export interface SdkRange {
  readonly minSdk: number;
  readonly maxSdk: number;
}

export function checkSchemeBlock(scheme: Scheme, value: Buffer, range: SdkRange, findings: Findings): SchemeCheck {
  const requiredSchemes = new Set<number>();
  let rotationMinSdk: number | null = null;
  let parsed: SchemeSigner[];
  try {
    parsed = parseSchemeBlock(scheme, value);
  } catch (error) {
    if (!(error instanceof SigningError)) throw error;
    findings.error(scheme, `malformed ${scheme} block: ${error.message}`);
    return { scheme, signers: [], requiredSchemes, rotationMinSdk, ok: false };
  }
  const signers: VerifiedSigner[] = [];
  let ok = true;
  parsed.forEach((signer, position) => {
    const index = position + 1;
    const fail = (message: string): void => {
      findings.error(scheme, `signer #${index}: ${message}`);
      ok = false;
    };
    let signerRange = range;
    if (scheme !== 'v2') {
      // V3SchemeVerifier: the range outside and inside the signed data must agree.
      if (signer.minSdk !== signer.signedData.minSdk || signer.maxSdk !== signer.signedData.maxSdk) {
        fail(`SDK range [${signer.minSdk}, ${signer.maxSdk}] differs from the signed range [${signer.signedData.minSdk}, ${signer.signedData.maxSdk}]`);
        return;
      }
      // Signers for platforms outside the checked range are not used by those devices.
      if (signer.maxSdk! < range.minSdk || signer.minSdk! > range.maxSdk) return;
      signerRange = { minSdk: Math.max(range.minSdk, signer.minSdk!), maxSdk: Math.min(range.maxSdk, signer.maxSdk!) };
    }
    const verified = verifySigner(scheme, signer, signerRange, fail, (message) => findings.warn(scheme, `signer #${index}: ${message}`));
    if (verified === null) return;
    for (const attribute of signer.signedData.attributes) {
      if (scheme === 'v2' && attribute.id === V2_STRIPPING_PROTECTION_ATTR_ID && attribute.data.length >= 4) requiredSchemes.add(attribute.data.readUInt32LE(0));
      if (scheme === 'v3' && attribute.id === ROTATION_MIN_SDK_ATTR_ID && attribute.data.length >= 4) rotationMinSdk = attribute.data.readUInt32LE(0);
    }
    signers.push({ ...verified, index });
  });
  if (parsed.length > 0 && signers.length === 0 && ok && scheme !== 'v2') {
    findings.error(scheme, `no ${scheme} signer covers SDK ${range.minSdk}..${range.maxSdk}`);
    ok = false;
  }
  return { scheme, signers, requiredSchemes, rotationMinSdk, ok };
}

function verifySigner(scheme: Scheme, signer: SchemeSigner, range: SdkRange, fail: (message: string) => void, warn: (message: string) => void): Omit<VerifiedSigner, 'index'> | null {
  if (signer.signatures.length === 0) {
    fail('no signatures');
    return null;
  }
  const supported: { algorithm: SignatureAlgorithm; signature: Buffer }[] = [];
  for (const { id, data } of signer.signatures) {
    const algorithm = signatureAlgorithmById(id);
    if (algorithm === undefined) warn(`unknown signature algorithm 0x${id.toString(16).padStart(4, '0')} ignored`);
    else supported.push({ algorithm, signature: data });
  }
  // apksig getSignaturesToVerify: per minimum platform level, the strongest algorithm; the
  // weakest level offered must reach down to the range's minimum.
  const best = new Map<number, { algorithm: SignatureAlgorithm; signature: Buffer }>();
  for (const candidate of supported) {
    if (candidate.algorithm.minSdk > range.maxSdk) continue;
    const current = best.get(candidate.algorithm.minSdk);
    if (current === undefined || compareAlgorithms(candidate.algorithm, current.algorithm) > 0) best.set(candidate.algorithm.minSdk, candidate);
  }
  if (best.size === 0 || Math.min(...best.keys()) > range.minSdk) {
    fail(`no supported signature for SDK ${range.minSdk}`);
    return null;
  }
  const contentDigests = new Map<ContentDigestAlgorithm, Buffer>();
  const toVerify = [...best.values()].sort((a, b) => a.algorithm.id - b.algorithm.id);
  for (const { algorithm, signature } of toVerify) {
    if (!verifyWith(algorithm, signer.signedDataBytes, signer.publicKey, signature)) {
      fail(`${algorithm.name} signature over signed data did not verify`);
      return null;
    }
  }
  const [certificateDer] = signer.signedData.certificates;
  if (certificateDer === undefined) {
    fail('no certificates');
    return null;
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certificateDer);
  } catch {
    fail('malformed certificate #1');
    return null;
  }
  if (!certificate.publicKey.export({ type: 'spki', format: 'der' }).equals(signer.publicKey)) {
    fail('public key mismatch between certificate and signature record');
    return null;
  }
  const signatureIds = signer.signatures.map((s) => s.id);
  const digestIds = signer.signedData.digests.map((d) => d.id);
  if (signatureIds.length !== digestIds.length || signatureIds.some((id, i) => id !== digestIds[i])) {
    fail('signature algorithms do not match between the digests and signatures records');
    return null;
  }
  for (const { algorithm } of toVerify) {
    const digest = signer.signedData.digests.find((d) => d.id === algorithm.id);
    if (digest !== undefined) contentDigests.set(algorithm.contentDigest, digest.data);
  }
  let lineage: LineageNode[] | null = null;
  for (const attribute of signer.signedData.attributes) {
    if (scheme === 'v2') {
      if (attribute.id !== V2_STRIPPING_PROTECTION_ATTR_ID) warn(`unknown additional attribute 0x${attribute.id.toString(16)}`);
      continue;
    }
    if (attribute.id === PROOF_OF_ROTATION_ATTR_ID) {
      try {
        lineage = parseLineage(attribute.data);
      } catch (error) {
        if (!(error instanceof SigningError)) throw error;
        fail(`proof-of-rotation: ${error.message}`);
        return null;
      }
      // V3SchemeVerifier: the newest lineage certificate must be the signer's.
      if (!lineage.at(-1)!.certificate.equals(certificateDer)) {
        fail('the newest certificate in the proof-of-rotation lineage is not the signer\'s certificate');
        return null;
      }
    } else if (attribute.id !== ROTATION_MIN_SDK_ATTR_ID && attribute.id !== ROTATION_ON_DEV_RELEASE_ATTR_ID) {
      warn(`unknown additional attribute 0x${attribute.id.toString(16)}`);
    }
  }
  return {
    certificate,
    certificateDer,
    algorithms: toVerify.map((s) => s.algorithm),
    contentDigests,
    minSdk: signer.minSdk,
    maxSdk: signer.maxSdk,
    lineage,
  };
}

/** apksig ApkSigningBlockUtils.compareSignatureAlgorithm: the stronger content digest wins; on a tie the first one listed stays. */
function compareAlgorithms(a: SignatureAlgorithm, b: SignatureAlgorithm): number {
  return digestStrength(a) - digestStrength(b);
}
