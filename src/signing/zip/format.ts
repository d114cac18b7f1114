// Record signatures, fixed sizes and little-endian helpers shared by the zip reader and writer.
// Hand-written: no npm zip library raw-copies entries or controls local headers byte for byte
// (see SPECIFICATION.md). Section numbers refer to PKWARE APPNOTE.TXT 6.3.10.
import { SigningError } from '../errors.ts';

// APPNOTE 4.3.7: local file header, 30 fixed bytes then name and extra.
export const LOCAL_HEADER_SIGNATURE = 0x04034b50;
export const LOCAL_HEADER_SIZE = 30;
// APPNOTE 4.3.9.3: the optional data descriptor signature.
export const DATA_DESCRIPTOR_SIGNATURE = 0x08074b50;
// APPNOTE 4.3.12: central directory file header, 46 fixed bytes then name, extra, comment.
export const CENTRAL_HEADER_SIGNATURE = 0x02014b50;
export const CENTRAL_HEADER_SIZE = 46;
// APPNOTE 4.3.16: end of central directory record, 22 fixed bytes then a comment of up to 65535.
export const EOCD_SIGNATURE = 0x06054b50;
export const EOCD_SIZE = 22;
export const MAX_COMMENT_LENGTH = 0xffff;
// APPNOTE 4.3.15: Zip64 end of central directory locator (20 bytes).
export const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
export const ZIP64_LOCATOR_SIZE = 20;
// APPNOTE 4.3.14: Zip64 end of central directory record (56 fixed bytes).
export const ZIP64_EOCD_SIGNATURE = 0x06064b50;
export const ZIP64_EOCD_SIZE = 56;

// APPNOTE 4.4.4: general purpose bit flags.
export const FLAG_ENCRYPTED = 0x0001;
export const FLAG_DATA_DESCRIPTOR = 0x0008;
export const FLAG_STRONG_ENCRYPTION = 0x0040;
export const FLAG_UTF8 = 0x0800;
export const FLAG_MASKED_HEADERS = 0x2000;

// APPNOTE 4.4.5: the two compression methods Signet reads and writes.
export const METHOD_STORED = 0;
export const METHOD_DEFLATED = 8;

// APPNOTE 4.4.2: upper byte of "version made by" = host system.
export const HOST_UNIX = 3;
export const HOST_OSX = 19;

// APPNOTE 4.4.1.4: values that mean "look in the Zip64 structures".
export const ZIP64_MARKER_16 = 0xffff;
export const ZIP64_MARKER_32 = 0xffffffff;

// APPNOTE 4.5.2: header IDs of extra fields Signet interprets.
export const EXTRA_ZIP64 = 0x0001;
export const EXTRA_EXTENDED_TIMESTAMP = 0x5455;
export const EXTRA_UNIX_UID_GID = 0x7875;
// Android ZIP Alignment Extra Field (apksig ApkSigner / zipalign -> see SPECIFICATION.md).
export const EXTRA_ANDROID_ALIGNMENT = 0xd935;

// Unix st_mode file types (sys/stat.h), stored in the upper 16 bits of external attributes.
export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;
export const S_IFLNK = 0o120000;
// MS-DOS directory attribute (low byte of external attributes).
export const DOS_DIRECTORY = 0x10;

/** Reads an unsigned 64-bit little-endian value that must fit a JS number, or fails as zip_invalid. */
export function readU64(buffer: Buffer, offset: number, what: string): number {
  const value = buffer.readBigUInt64LE(offset);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new SigningError('zip_invalid', `${what} (${value}) is beyond 2^53`);
  }
  return Number(value);
}

export function writeU64(buffer: Buffer, value: number, offset: number): void {
  buffer.writeBigUInt64LE(BigInt(value), offset);
}

/** MS-DOS date/time (APPNOTE 4.4.6) to a Date in UTC, as zip stores no zone. Null if out of range. */
export function dosToDate(dosDate: number, dosTime: number): Date | null {
  const year = 1980 + (dosDate >>> 9);
  const month = (dosDate >>> 5) & 0x0f;
  const day = dosDate & 0x1f;
  const hours = dosTime >>> 11;
  const minutes = (dosTime >>> 5) & 0x3f;
  const seconds = (dosTime & 0x1f) * 2;
  if (month < 1 || month > 12 || day < 1 || hours > 23 || minutes > 59 || seconds > 59) return null;
  return new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds));
}

/** A Date to MS-DOS date/time fields (UTC, 2-second resolution, clamped to 1980..2107). */
export function dateToDos(date: Date): { dosDate: number; dosTime: number } {
  const year = Math.min(Math.max(date.getUTCFullYear(), 1980), 2107);
  if (year !== date.getUTCFullYear()) {
    return year === 1980 ? { dosDate: (0 << 9) | (1 << 5) | 1, dosTime: 0 } : { dosDate: (127 << 9) | (12 << 5) | 31, dosTime: (23 << 11) | (59 << 5) | 29 };
  }
  const dosDate = ((year - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate();
  const dosTime = (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | (date.getUTCSeconds() >>> 1);
  return { dosDate, dosTime };
}
