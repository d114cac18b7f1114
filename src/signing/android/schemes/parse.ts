// Decoding v2/v3/v3.1 scheme blocks (apksig V2SchemeVerifier.parseSigners,
// V3SchemeVerifier.parseSigners). Every length is bounds-checked: a malformed block is an
// apk_signature_invalid error naming the structure, never a crash.
import { ByteReader } from '../bytes.ts';
import type { IdAndBytes, Scheme, SchemeSigner, SignedData } from './types.ts';

export function parseSchemeBlock(scheme: Scheme, value: Buffer): SchemeSigner[] {
  const signers = new ByteReader(value, `${scheme} block`).nested('signers');
  const encoded = signers.sequence();
  // apksig: "No signers found".
  if (encoded.length === 0) signers.fail('no signers');
  return encoded.map((bytes, index) => parseSigner(scheme, bytes, index + 1));
}

export function parseSigner(scheme: Scheme, bytes: Buffer, number: number): SchemeSigner {
  const reader = new ByteReader(bytes, `${scheme} signer #${number}`);
  const signedDataBytes = reader.lengthPrefixed();
  const minSdk = scheme === 'v2' ? null : reader.u32();
  const maxSdk = scheme === 'v2' ? null : reader.u32();
  const signatures = reader.nested('signatures').idAndBytesSequence();
  const publicKey = reader.lengthPrefixed();
  const signedData = parseSignedData(scheme, signedDataBytes, number);
  return { signedDataBytes, signedData, minSdk, maxSdk, signatures, publicKey };
}

export function parseSignedData(scheme: Scheme, bytes: Buffer, number: number): SignedData {
  const reader = new ByteReader(bytes, `${scheme} signer #${number} signed data`);
  const digests = reader.nested('digests').idAndBytesSequence();
  const certificates = reader.nested('certificates').sequence();
  const minSdk = scheme === 'v2' ? null : reader.u32();
  const maxSdk = scheme === 'v2' ? null : reader.u32();
  const attributes = parseAttributes(reader.nested('additional attributes'));
  // Trailing bytes (v2's reserved empty element) are ignored, as apksig does.
  return { digests, certificates, minSdk, maxSdk, attributes };
}

function parseAttributes(reader: ByteReader): IdAndBytes[] {
  return reader.sequence().map((item, index) => {
    // apksig: "Additional attribute too short" below 4 bytes.
    const attribute = new ByteReader(item, `additional attribute #${index + 1}`);
    return { id: attribute.u32(), data: attribute.bytes(attribute.remaining) };
  });
}
