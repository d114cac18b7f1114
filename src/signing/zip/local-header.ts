// Local file headers (APPNOTE 4.3.7) and data descriptors (APPNOTE 4.3.9): parsing, plus the
// cross-checks against the central directory that stop "two parsers see two archives" tricks.
import { SigningError } from '../errors.ts';
import type { CentralRecord } from './central-directory.ts';
import type { LocalHeaderFields } from './entry.ts';
import { judge, type Leniency } from './entry-checks.ts';
import { DATA_DESCRIPTOR_SIGNATURE, FLAG_DATA_DESCRIPTOR, FLAG_ENCRYPTED, LOCAL_HEADER_SIGNATURE, LOCAL_HEADER_SIZE, ZIP64_MARKER_32 } from './format.ts';

export function parseLocalHeaderFields(fixed: Buffer): LocalHeaderFields {
  return {
    versionNeeded: fixed.readUInt16LE(4),
    flags: fixed.readUInt16LE(6),
    method: fixed.readUInt16LE(8),
    dosTime: fixed.readUInt16LE(10),
    dosDate: fixed.readUInt16LE(12),
    crc32: fixed.readUInt32LE(14),
    compressedSize: fixed.readUInt32LE(18),
    uncompressedSize: fixed.readUInt32LE(22),
    nameLength: fixed.readUInt16LE(26),
    extraLength: fixed.readUInt16LE(28),
  };
}

/**
 * Checks the 30 fixed bytes of `record`'s local header and returns its parsed fields. A
 * discarded entry (`leniency` not null) is held to what apksig's LocalFileRecord.getRecord checks
 * for every entry - signature, name, CRC-32 and sizes - and only its method and encryption
 * disagreements are tolerated (reading it goes by the central directory, as apksig's does).
 */
export function checkLocalHeader(fixed: Buffer, record: CentralRecord, leniency: Leniency | null = null): LocalHeaderFields {
  // Built only for an error: this runs for every entry of every archive opened.
  const what = (): string => `local header of ${JSON.stringify(record.name)} at ${record.localHeaderOffset}`;
  if (fixed.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) throw new SigningError('zip_invalid', `${what()} has no signature (APPNOTE 4.3.7)`);
  const local = parseLocalHeaderFields(fixed);
  // The central directory is authoritative, but a local header that disagrees about the name,
  // method or encryption would let another unzip tool see different content, so it is refused.
  if (local.nameLength !== record.nameBytes.length) throw new SigningError('zip_invalid', `${what()} names a different entry than the central directory`);
  if (local.method !== record.method || (local.flags & FLAG_ENCRYPTED) !== (record.flags & FLAG_ENCRYPTED)) {
    judge(leniency, 'extraction', () => {
      if (local.method !== record.method) throw new SigningError('zip_invalid', `${what()} has compression method ${local.method}, the central directory says ${record.method}`);
      throw new SigningError('zip_invalid', `${what()} disagrees with the central directory about encryption`);
    });
  }
  // APPNOTE 4.4.4 bit 3: without a data descriptor, the local CRC and sizes are the real ones.
  // A 0xFFFFFFFF size is a Zip64 marker whose value lives in the local Zip64 extra field.
  if ((local.flags & FLAG_DATA_DESCRIPTOR) === 0) {
    const sizeDiffers = (localValue: number, centralValue: number): boolean => localValue !== ZIP64_MARKER_32 && localValue !== centralValue;
    if (local.crc32 !== record.crc32 || sizeDiffers(local.compressedSize, record.compressedSize) || sizeDiffers(local.uncompressedSize, record.uncompressedSize)) {
      throw new SigningError('zip_invalid', `${what()} disagrees with the central directory about CRC-32 or sizes`);
    }
  }
  return local;
}

export function localHeaderLength(local: LocalHeaderFields): number {
  return LOCAL_HEADER_SIZE + local.nameLength + local.extraLength;
}

/**
 * APPNOTE 4.3.9: after the data, an optional signature, CRC-32 and two sizes, 4 bytes each, or
 * 8 bytes each when the entry is Zip64 (4.3.9.2). `bytes` starts at the end of the data and holds
 * up to 24 bytes. Returns the descriptor length, trying the signed form first and then the
 * unsigned one (a CRC may equal the signature); each must match the central directory.
 *
 * Some writers (seen in macOS-made .ipa files) set bit 3 yet put the real CRC and sizes in the
 * local header and write no descriptor. unzip and Python accept that, so when no matching
 * descriptor follows but the local header itself matches the central directory, the length is 0.
 *
 * A discarded entry's descriptor is never compared: as apksig LocalFileRecord.getRecord does,
 * a mismatch is recorded and the descriptor taken as 16 bytes when it starts with the
 * signature, else 12 (the caller checks that they end before the central directory).
 */
export function dataDescriptorLength(bytes: Buffer, record: CentralRecord, local: LocalHeaderFields, zip64: boolean, leniency: Leniency | null = null): number {
  const sizeBytes = zip64 ? 8 : 4;
  const matches = (start: number): boolean => {
    if (bytes.length < start + 4 + 2 * sizeBytes) return false;
    const crc = bytes.readUInt32LE(start);
    const compressed = zip64 ? Number(bytes.readBigUInt64LE(start + 4)) : bytes.readUInt32LE(start + 4);
    const uncompressed = zip64 ? Number(bytes.readBigUInt64LE(start + 12)) : bytes.readUInt32LE(start + 8);
    return crc === record.crc32 && compressed === record.compressedSize && uncompressed === record.uncompressedSize;
  };
  if (bytes.length >= 4 && bytes.readUInt32LE(0) === DATA_DESCRIPTOR_SIGNATURE && matches(4)) return 4 + 4 + 2 * sizeBytes;
  if (matches(0)) return 4 + 2 * sizeBytes;
  if (local.crc32 === record.crc32 && local.compressedSize === record.compressedSize && local.uncompressedSize === record.uncompressedSize) return 0;
  const error = new SigningError('zip_invalid', `data descriptor of ${JSON.stringify(record.name)} is missing or disagrees with the central directory (APPNOTE 4.3.9)`);
  if (leniency === null) throw error;
  leniency.tolerated.push(error);
  return bytes.length >= 4 && bytes.readUInt32LE(0) === DATA_DESCRIPTOR_SIGNATURE ? 16 : 12;
}
