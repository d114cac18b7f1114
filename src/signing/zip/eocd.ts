// Locating and decoding the end of central directory (APPNOTE 4.3.16) and, when present, the
// Zip64 locator and Zip64 end of central directory record (APPNOTE 4.3.14, 4.3.15).
import type { DataSource } from '../data-source.ts';
import { SigningError } from '../errors.ts';
import {
  EOCD_SIGNATURE, EOCD_SIZE, MAX_COMMENT_LENGTH, ZIP64_EOCD_SIGNATURE, ZIP64_EOCD_SIZE, ZIP64_LOCATOR_SIGNATURE,
  ZIP64_LOCATOR_SIZE, ZIP64_MARKER_16, ZIP64_MARKER_32, readU64,
} from './format.ts';

export interface EndOfCentralDirectory {
  /** Offset of the classic EOCD record. */
  eocdOffset: number;
  /** The classic EOCD record including its comment, byte for byte. */
  eocd: Buffer;
  comment: Buffer;
  entryCount: number;
  centralDirectoryOffset: number;
  centralDirectorySize: number;
  /** Offset of the Zip64 EOCD record, or null for a classic archive. */
  zip64EocdOffset: number | null;
}

const invalid = (message: string): SigningError => new SigningError('zip_invalid', message);

/**
 * apksig ZipUtils.findZipEndOfCentralDirectoryRecord: try a record with an empty comment at
 * size - 22 first, then scan back through at most 65535 bytes of comment for a signature whose
 * comment-length field reaches exactly the end of the file. Trailing bytes after the comment are
 * not tolerated, so the EOCD found is unambiguous.
 */
export async function readEndOfCentralDirectory(source: DataSource): Promise<EndOfCentralDirectory> {
  if (source.size < EOCD_SIZE) throw invalid(`file of ${source.size} bytes is too short to be a zip archive`);
  const tailLength = Math.min(source.size, EOCD_SIZE + MAX_COMMENT_LENGTH);
  const tailStart = source.size - tailLength;
  const tail = await source.read(tailStart, tailLength);
  let found = -1;
  for (let pos = tail.length - EOCD_SIZE; pos >= 0; pos--) {
    if (tail.readUInt32LE(pos) === EOCD_SIGNATURE && tail.readUInt16LE(pos + 20) === tail.length - pos - EOCD_SIZE) {
      found = pos;
      break;
    }
  }
  if (found < 0) throw invalid('no end of central directory record (APPNOTE 4.3.16)');
  const eocdOffset = tailStart + found;
  const eocd = Buffer.from(tail.subarray(found));
  const diskNumber = eocd.readUInt16LE(4);
  const cdDisk = eocd.readUInt16LE(6);
  const entriesOnDisk = eocd.readUInt16LE(8);
  let entryCount = eocd.readUInt16LE(10);
  let centralDirectorySize = eocd.readUInt32LE(12);
  let centralDirectoryOffset = eocd.readUInt32LE(16);
  let zip64EocdOffset: number | null = null;

  const locatorOffset = eocdOffset - ZIP64_LOCATOR_SIZE;
  const locator = locatorOffset >= 0 ? await source.read(locatorOffset, ZIP64_LOCATOR_SIZE) : null;
  if (locator !== null && locator.readUInt32LE(0) === ZIP64_LOCATOR_SIGNATURE) {
    // APPNOTE 4.3.15: disk with the Zip64 EOCD, its offset, total number of disks.
    const totalDisks = locator.readUInt32LE(16);
    if (locator.readUInt32LE(4) !== 0 || totalDisks > 1) throw new SigningError('zip_unsupported', 'multi-disk (spanned) zip archives are not supported');
    const offset = readU64(locator, 8, 'Zip64 EOCD offset');
    if (offset + ZIP64_EOCD_SIZE > locatorOffset) throw invalid('Zip64 end of central directory record lies outside the file (APPNOTE 4.3.15)');
    const record = await source.read(offset, ZIP64_EOCD_SIZE);
    if (record.readUInt32LE(0) !== ZIP64_EOCD_SIGNATURE) throw invalid('Zip64 locator does not point at a Zip64 end of central directory record (APPNOTE 4.3.14)');
    // APPNOTE 4.3.14.1: the size field excludes the leading 12 bytes.
    const recordSize = readU64(record, 4, 'Zip64 EOCD size');
    if (recordSize < ZIP64_EOCD_SIZE - 12 || offset + 12 + recordSize > locatorOffset) throw invalid('Zip64 end of central directory record has a bad size');
    if (record.readUInt32LE(16) !== 0 || record.readUInt32LE(20) !== 0) throw new SigningError('zip_unsupported', 'multi-disk (spanned) zip archives are not supported');
    const onDisk64 = readU64(record, 24, 'Zip64 entry count on disk');
    const total64 = readU64(record, 32, 'Zip64 entry count');
    if (onDisk64 !== total64) throw new SigningError('zip_unsupported', 'multi-disk (spanned) zip archives are not supported');
    // APPNOTE 4.4.1.4: a classic field that is not the 0xFF.. marker must agree with Zip64.
    const size64 = readU64(record, 40, 'Zip64 central directory size');
    const offset64 = readU64(record, 48, 'Zip64 central directory offset');
    if ((entryCount !== ZIP64_MARKER_16 && entryCount !== total64) ||
        (centralDirectorySize !== ZIP64_MARKER_32 && centralDirectorySize !== size64) ||
        (centralDirectoryOffset !== ZIP64_MARKER_32 && centralDirectoryOffset !== offset64)) {
      throw invalid('end of central directory and Zip64 end of central directory disagree (APPNOTE 4.4.1.4)');
    }
    entryCount = total64;
    centralDirectorySize = size64;
    centralDirectoryOffset = offset64;
    zip64EocdOffset = offset;
  } else {
    if (diskNumber !== 0 || cdDisk !== 0 || entriesOnDisk !== entryCount) {
      throw new SigningError('zip_unsupported', 'multi-disk (spanned) zip archives are not supported');
    }
  }

  const cdLimit = zip64EocdOffset ?? eocdOffset;
  if (centralDirectoryOffset + centralDirectorySize > cdLimit) {
    throw invalid(`central directory [${centralDirectoryOffset}, +${centralDirectorySize}) runs past the end of central directory record at ${cdLimit}`);
  }
  return {
    eocdOffset, eocd, comment: eocd.subarray(EOCD_SIZE), entryCount, centralDirectoryOffset, centralDirectorySize, zip64EocdOffset,
  };
}
