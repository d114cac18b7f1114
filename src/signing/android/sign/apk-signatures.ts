// The v2, v3 and v3.1 pairs of a new APK Signing Block (apksig DefaultApkSignerEngine
// outputZipSections: V2SchemeSigner, V3SchemeSigner), with or without key rotation.
//  - no rotation: v2 and v3 by the one key; v3's signer covers [24, any];
//  - rotation at SDK 28 (v3): v1/v2 by the previous key, v3 by the new key for [28, any] with the
//    proof-of-rotation lineage;
//  - rotation at SDK R >= 33 (v3.1, Android 13+): v1/v2 and v3 by the previous key (v3 for
//    [24, R-1], announcing R in 0x559f8b02 so that stripping v3.1 is detected), v3.1 by the new
//    key for [R, any] with the lineage.
import { X509Certificate, createPublicKey } from 'node:crypto';
import type { Identity } from '../../cms/identity.ts';
import { SigningError } from '../../errors.ts';
import { algorithmForKey, type ContentDigestAlgorithm } from '../algorithms.ts';
import { u32 } from '../bytes.ts';
import {
  MAX_SDK, PROOF_OF_ROTATION_ATTR_ID, ROTATION_MIN_SDK_ATTR_ID, SCHEME_ID_V3, V2_BLOCK_ID, V2_STRIPPING_PROTECTION_ATTR_ID, V31_BLOCK_ID,
  V3_BLOCK_ID,
} from '../block/constants.ts';
import type { SigningBlockPair } from '../block/parse.ts';
import { encodeLineage, parseLineageFile } from '../lineage/lineage.ts';
import { encodeSchemeBlock } from '../schemes/build.ts';
import { signSchemeSigner, type SchemeSignerConfig } from '../schemes/sign.ts';

// android.os.Build.VERSION_CODES.P and T: the first platforms reading v3 and v3.1.
const P = 28;
const T = 33;

export interface KeyRotation {
  /** The key the app was signed with before; v1 and v2 (and v3 below the rotation SDK) use it. */
  readonly previous: Identity;
  /** An `apksigner rotate` lineage file proving previous -> current. */
  readonly lineageFile: Buffer;
  /** First platform that sees the new key (apksigner --rotation-min-sdk-version): 28, or 33+ for v3.1. Default 33. */
  readonly minSdk?: number;
}

export interface PreparedRotation {
  readonly previous: Identity;
  readonly lineage: Buffer;
  readonly minSdk: number;
}

/** Parses and checks the lineage: it must lead from the previous key's certificate to the current one. */
export function prepareRotation(rotation: KeyRotation, current: Identity): PreparedRotation {
  const nodes = parseLineageFile(rotation.lineageFile);
  const minSdk = rotation.minSdk ?? T;
  if (minSdk !== P && minSdk < T) throw new SigningError('apk_invalid', `key rotation targets SDK 28 (v3) or 33 and later (v3.1), not ${minSdk}`);
  if (!new X509Certificate(rotation.previous.certificate).publicKey.equals(createPublicKey(rotation.previous.privateKey))) {
    throw new SigningError('key_certificate_mismatch', 'the previous private key does not belong to its certificate');
  }
  const same = (a: Buffer, b: Buffer): boolean => new X509Certificate(a).fingerprint256 === new X509Certificate(b).fingerprint256;
  if (!same(nodes.at(-1)!.certificate, current.certificate)) {
    throw new SigningError('key_certificate_mismatch', 'the lineage does not end with the signing certificate');
  }
  if (!nodes.some((node) => same(node.certificate, rotation.previous.certificate))) {
    throw new SigningError('key_certificate_mismatch', 'the previous signing certificate is not in the lineage');
  }
  return { previous: rotation.previous, lineage: encodeLineage(nodes), minSdk };
}

/** Content digest algorithms the signatures will need. */
export function digestAlgorithmsFor(current: Identity, rotation: PreparedRotation | null): Set<ContentDigestAlgorithm> {
  const set = new Set([algorithmForKey(current.privateKey).contentDigest]);
  if (rotation !== null) set.add(algorithmForKey(rotation.previous.privateKey).contentDigest);
  return set;
}

function config(identity: Identity, attributes: SchemeSignerConfig['attributes'], range?: { minSdk: number; maxSdk: number }): SchemeSignerConfig {
  return { privateKey: identity.privateKey, certificates: [identity.certificate, ...identity.chain], algorithm: algorithmForKey(identity.privateKey), attributes, ...range };
}

export function schemePairs(schemes: { v2: boolean; v3: boolean }, current: Identity, rotation: PreparedRotation | null, digests: ReadonlyMap<ContentDigestAlgorithm, Buffer>): SigningBlockPair[] {
  const sign = (scheme: 'v2' | 'v3' | 'v3.1', signerConfig: SchemeSignerConfig): Buffer =>
    encodeSchemeBlock([signSchemeSigner(scheme, signerConfig, digests.get(signerConfig.algorithm.contentDigest)!)]);
  const oldest = rotation?.previous ?? current;
  const pairs: SigningBlockPair[] = [];
  if (schemes.v2) {
    // V2SchemeSigner: "this APK is also v3-signed", so that stripping v3 is detected.
    pairs.push({ id: V2_BLOCK_ID, value: sign('v2', config(oldest, schemes.v3 ? [{ id: V2_STRIPPING_PROTECTION_ATTR_ID, data: u32(SCHEME_ID_V3) }] : [])) });
  }
  if (!schemes.v3) return pairs;
  const lineage = rotation === null ? [] : [{ id: PROOF_OF_ROTATION_ATTR_ID, data: rotation.lineage }];
  if (rotation !== null && rotation.minSdk >= T) {
    // apksig writes the v3.1 block before the v3 block.
    pairs.push({ id: V31_BLOCK_ID, value: sign('v3.1', config(current, lineage, { minSdk: rotation.minSdk, maxSdk: MAX_SDK })) });
    const previous = config(rotation.previous, [{ id: ROTATION_MIN_SDK_ATTR_ID, data: u32(rotation.minSdk) }]);
    pairs.push({ id: V3_BLOCK_ID, value: sign('v3', { ...previous, minSdk: previous.algorithm.minSdk, maxSdk: rotation.minSdk - 1 }) });
  } else {
    // Without rotation the signer starts at its algorithm's minimum (24), as apksig writes it.
    const current3 = config(current, lineage);
    const minSdk = rotation === null ? current3.algorithm.minSdk : Math.max(current3.algorithm.minSdk, P);
    pairs.push({ id: V3_BLOCK_ID, value: sign('v3', { ...current3, minSdk, maxSdk: MAX_SDK }) });
  }
  return pairs;
}
