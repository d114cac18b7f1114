// SuperBlob (embedded signature): u32 magic 0xfade0cc0, u32 length, u32 count,
// {u32 type, u32 offset}[count], then the blobs. Security's EmbeddedSignatureBlob::Maker keeps
// blobs in a map sorted by slot type, so the index is in ascending type order (cs_blobs.h).
import { SigningError } from '../../errors.ts';
import { CSMAGIC_EMBEDDED_SIGNATURE } from './constants.ts';

export interface SuperBlobEntry {
  readonly type: number;
  readonly blob: Buffer;
}

const bad = (message: string): SigningError => new SigningError('code_signature_invalid', `Malformed signature SuperBlob: ${message}`);

/** Serialises entries in ascending slot order, blobs packed after the index. */
export function serializeSuperBlob(entries: readonly SuperBlobEntry[], magic = CSMAGIC_EMBEDDED_SIGNATURE): Buffer {
  const sorted = [...entries].sort((a, b) => a.type - b.type);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.type === sorted[i - 1]!.type) throw new Error(`duplicate SuperBlob slot ${sorted[i]!.type}`);
  }
  const headerSize = 12 + 8 * sorted.length;
  const total = sorted.reduce((sum, e) => sum + e.blob.length, headerSize);
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32BE(magic, 0);
  out.writeUInt32BE(total, 4);
  out.writeUInt32BE(sorted.length, 8);
  let offset = headerSize;
  sorted.forEach((entry, i) => {
    out.writeUInt32BE(entry.type, 12 + 8 * i);
    out.writeUInt32BE(offset, 16 + 8 * i);
    entry.blob.copy(out, offset);
    offset += entry.blob.length;
  });
  return out;
}

/** Size serializeSuperBlob would produce for blobs of these lengths. */
export function superBlobSize(blobLengths: readonly number[]): number {
  return blobLengths.reduce((sum, n) => sum + 8 + n, 12);
}

/**
 * Parses a SuperBlob at the start of `bytes` (trailing padding allowed). Each entry's blob is
 * a view sized by its own length field, which must lie inside the SuperBlob.
 */
export function parseSuperBlob(bytes: Buffer, magic = CSMAGIC_EMBEDDED_SIGNATURE): SuperBlobEntry[] {
  if (bytes.length < 12) throw bad('shorter than its header');
  if (bytes.readUInt32BE(0) !== magic) throw bad(`magic 0x${bytes.readUInt32BE(0).toString(16)}`);
  const length = bytes.readUInt32BE(4);
  const count = bytes.readUInt32BE(8);
  if (length > bytes.length || length < 12) throw bad(`length ${length} exceeds the ${bytes.length}-byte signature area`);
  if (12 + 8 * count > length) throw bad(`${count} index entries do not fit`);
  const entries: SuperBlobEntry[] = [];
  for (let i = 0; i < count; i++) {
    const type = bytes.readUInt32BE(12 + 8 * i);
    const offset = bytes.readUInt32BE(16 + 8 * i);
    if (offset < 12 + 8 * count || offset + 8 > length) throw bad(`slot 0x${type.toString(16)} offset ${offset} out of range`);
    const blobLength = bytes.readUInt32BE(offset + 4);
    if (blobLength < 8 || offset + blobLength > length) throw bad(`slot 0x${type.toString(16)} length ${blobLength} out of range`);
    if (entries.some((e) => e.type === type)) throw bad(`slot 0x${type.toString(16)} appears twice`);
    entries.push({ type, blob: bytes.subarray(offset, offset + blobLength) });
  }
  return entries;
}
