// Proof-of-rotation lineage: the chain of signing certificates an app has rotated through, each
// node signed by the previous one (apksig SigningCertificateLineage / V3SigningCertificateLineage).
//   attribute value = u32 version (1) || sequence of lp(node)
//   node            = lp(signedData) || u32 flags || u32 sigAlgId || lp(signature)
//   signedData      = lp(certificate DER) || u32 parentSigAlgId
// The stand-alone file (apksigner rotate --out) wraps it: u32 0x3eff39d1 || u32 1 || lp(lineage).
import { X509Certificate } from 'node:crypto';
import { ByteReader, lengthPrefixed, sequenceOfLengthPrefixed, u32 } from '../bytes.ts';
import { signatureAlgorithmById, verifyWith } from '../algorithms.ts';
import { SigningError } from '../../errors.ts';

export const LINEAGE_VERSION = 1;
export const LINEAGE_FILE_MAGIC = 0x3eff39d1;
export const LINEAGE_FILE_VERSION = 1;

export interface LineageNode {
  readonly certificate: Buffer;
  /** The algorithm the previous node's key used to sign this node (0 for the first node). */
  readonly parentSignatureAlgorithm: number;
  /** Capability flags (installed data, shared UID, permission, rollback, auth). */
  readonly flags: number;
  /** The algorithm this node's key uses to sign the next node (0 for the last). */
  readonly signatureAlgorithm: number;
  /** The previous node's signature over `signedData` (empty for the first node). */
  readonly signature: Buffer;
  readonly signedData: Buffer;
}

/** Parses and verifies a lineage attribute: every node must be signed by its predecessor. */
export function parseLineage(value: Buffer): LineageNode[] {
  const reader = new ByteReader(value, 'proof-of-rotation lineage');
  const version = reader.u32();
  if (version !== LINEAGE_VERSION) reader.fail(`unsupported version ${version}`);
  const nodes: LineageNode[] = [];
  const seen = new Set<string>();
  for (const encoded of reader.sequence()) {
    const index = nodes.length + 1;
    const node = new ByteReader(encoded, `lineage node #${index}`);
    const signedData = node.lengthPrefixed();
    const flags = node.u32();
    const signatureAlgorithm = node.u32();
    const signature = node.lengthPrefixed();
    const signed = new ByteReader(signedData, `lineage node #${index} signed data`);
    const certificate = signed.lengthPrefixed();
    const parentSignatureAlgorithm = signed.u32();
    const previous = nodes.at(-1);
    if (previous !== undefined) {
      // apksig: the parent's declared algorithm must be the one the child says signed it.
      if (previous.signatureAlgorithm !== parentSignatureAlgorithm) node.fail(`signing algorithm ID mismatch (${previous.signatureAlgorithm} vs ${parentSignatureAlgorithm})`);
      const algorithm = signatureAlgorithmById(parentSignatureAlgorithm);
      if (algorithm === undefined) node.fail(`unknown signature algorithm 0x${parentSignatureAlgorithm.toString(16)}`);
      const parentKey = certificateKey(previous.certificate, index - 1);
      if (!verifyWith(algorithm!, signedData, parentKey, signature)) node.fail('the previous signer\'s signature does not verify');
    }
    const fingerprint = certificateKey(certificate, index).toString('hex') + ':' + certificate.toString('hex');
    if (seen.has(fingerprint)) node.fail('duplicate certificate in the lineage');
    seen.add(fingerprint);
    nodes.push({ certificate, parentSignatureAlgorithm, flags, signatureAlgorithm, signature, signedData });
  }
  if (nodes.length === 0) reader.fail('no certificates');
  return nodes;
}

/** Encodes nodes back into an attribute value (signatures are taken as given). */
export function encodeLineage(nodes: readonly LineageNode[]): Buffer {
  const encoded = nodes.map((node) => Buffer.concat([
    lengthPrefixed(Buffer.concat([lengthPrefixed(node.certificate), u32(node.parentSignatureAlgorithm)])),
    u32(node.flags),
    u32(node.signatureAlgorithm),
    lengthPrefixed(node.signature),
  ]));
  return Buffer.concat([u32(LINEAGE_VERSION), sequenceOfLengthPrefixed(encoded)]);
}

/** Reads an `apksigner rotate` lineage file. */
export function parseLineageFile(file: Buffer): LineageNode[] {
  const reader = new ByteReader(file, 'lineage file', 'apk_invalid');
  if (reader.u32() !== LINEAGE_FILE_MAGIC) reader.fail('not a signing certificate lineage file (bad magic)');
  const version = reader.u32();
  if (version !== LINEAGE_FILE_VERSION) reader.fail(`unsupported lineage file version ${version}`);
  try {
    return parseLineage(reader.lengthPrefixed());
  } catch (cause) {
    if (cause instanceof SigningError) throw new SigningError('apk_invalid', cause.message, { cause });
    throw cause;
  }
}

function certificateKey(der: Buffer, index: number): Buffer {
  try {
    return new X509Certificate(der).publicKey.export({ type: 'spki', format: 'der' });
  } catch (cause) {
    throw new SigningError('apk_signature_invalid', `lineage certificate #${index} cannot be parsed`, { cause });
  }
}
