// Generic code-signing blob: u32 magic, u32 length (header included), payload; big-endian
// (Security cdsblob / cs_blobs.h CS_GenericBlob).
import { SigningError } from '../../errors.ts';

export function wrapBlob(magic: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(8 + payload.length);
  out.writeUInt32BE(magic, 0);
  out.writeUInt32BE(out.length, 4);
  out.set(payload, 8);
  return out;
}

/** Checks a blob's magic and length against its buffer and returns the payload. */
export function unwrapBlob(blob: Buffer, magic: number, what: string): Buffer {
  if (blob.length < 8) throw new SigningError('code_signature_invalid', `${what}: blob shorter than its header`);
  const found = blob.readUInt32BE(0);
  if (found !== magic) {
    throw new SigningError('code_signature_invalid', `${what}: magic 0x${found.toString(16)} is not 0x${magic.toString(16)}`);
  }
  if (blob.readUInt32BE(4) !== blob.length) throw new SigningError('code_signature_invalid', `${what}: blob length field does not match`);
  return blob.subarray(8);
}
