// Building the records the writer emits: local file headers (APPNOTE 4.3.7), central directory
// records (4.3.12), Zip64 extra fields (4.5.3), and the end records (4.3.14-4.3.16).
import { SigningError } from '../errors.ts';
import {
  CENTRAL_HEADER_SIGNATURE, CENTRAL_HEADER_SIZE, EOCD_SIGNATURE, EOCD_SIZE, EXTRA_ZIP64, LOCAL_HEADER_SIGNATURE, LOCAL_HEADER_SIZE,
  ZIP64_EOCD_SIGNATURE, ZIP64_EOCD_SIZE, ZIP64_LOCATOR_SIGNATURE, ZIP64_LOCATOR_SIZE, ZIP64_MARKER_16, ZIP64_MARKER_32, writeU64,
} from './format.ts';
import { parseExtraFields, serializeExtraFields } from './extra-fields.ts';

// APPNOTE 4.4.3.2: 2.0 for deflate and directories, 4.5 for Zip64.
export const VERSION_DEFAULT = 20;
export const VERSION_ZIP64 = 45;

export interface HeaderFields {
  versionNeeded: number;
  flags: number;
  method: number;
  dosTime: number;
  dosDate: number;
  crc32: number;
  /** The values written in the 32-bit slots (real values, or 0xFFFFFFFF markers). */
  compressedSize: number;
  uncompressedSize: number;
  nameBytes: Buffer;
  extra: Buffer;
}

export function buildLocalHeader(fields: HeaderFields): Buffer {
  checkExtraLength(fields.extra);
  const header = Buffer.alloc(LOCAL_HEADER_SIZE + fields.nameBytes.length + fields.extra.length);
  header.writeUInt32LE(LOCAL_HEADER_SIGNATURE, 0);
  header.writeUInt16LE(fields.versionNeeded, 4);
  header.writeUInt16LE(fields.flags, 6);
  header.writeUInt16LE(fields.method, 8);
  header.writeUInt16LE(fields.dosTime, 10);
  header.writeUInt16LE(fields.dosDate, 12);
  header.writeUInt32LE(fields.crc32 >>> 0, 14);
  header.writeUInt32LE(fields.compressedSize, 18);
  header.writeUInt32LE(fields.uncompressedSize, 22);
  header.writeUInt16LE(fields.nameBytes.length, 26);
  header.writeUInt16LE(fields.extra.length, 28);
  fields.nameBytes.copy(header, LOCAL_HEADER_SIZE);
  fields.extra.copy(header, LOCAL_HEADER_SIZE + fields.nameBytes.length);
  return header;
}

export interface CentralFields extends HeaderFields {
  versionMadeBy: number;
  internalAttributes: number;
  externalAttributes: number;
  /** The value written in the 32-bit offset slot. */
  localHeaderOffset: number;
  comment: Buffer;
}

export function buildCentralRecord(fields: CentralFields): Buffer {
  checkExtraLength(fields.extra);
  const n = fields.nameBytes.length;
  const record = Buffer.alloc(CENTRAL_HEADER_SIZE + n + fields.extra.length + fields.comment.length);
  record.writeUInt32LE(CENTRAL_HEADER_SIGNATURE, 0);
  record.writeUInt16LE(fields.versionMadeBy, 4);
  record.writeUInt16LE(fields.versionNeeded, 6);
  record.writeUInt16LE(fields.flags, 8);
  record.writeUInt16LE(fields.method, 10);
  record.writeUInt16LE(fields.dosTime, 12);
  record.writeUInt16LE(fields.dosDate, 14);
  record.writeUInt32LE(fields.crc32 >>> 0, 16);
  record.writeUInt32LE(fields.compressedSize, 20);
  record.writeUInt32LE(fields.uncompressedSize, 24);
  record.writeUInt16LE(n, 28);
  record.writeUInt16LE(fields.extra.length, 30);
  record.writeUInt16LE(fields.comment.length, 32);
  record.writeUInt16LE(0, 34); // disk number start
  record.writeUInt16LE(fields.internalAttributes, 36);
  record.writeUInt32LE(fields.externalAttributes >>> 0, 38);
  record.writeUInt32LE(fields.localHeaderOffset, 42);
  fields.nameBytes.copy(record, CENTRAL_HEADER_SIZE);
  fields.extra.copy(record, CENTRAL_HEADER_SIZE + n);
  fields.comment.copy(record, CENTRAL_HEADER_SIZE + n + fields.extra.length);
  return record;
}

/** apksig CentralDirectoryRecord.createWithModifiedLocalFileHeaderOffset: same bytes, new offset. */
export function withLocalHeaderOffset(record: Buffer, offset: number): Buffer {
  const copy = Buffer.from(record);
  copy.writeUInt32LE(offset, 42);
  return copy;
}

function checkExtraLength(extra: Buffer): void {
  if (extra.length > 0xffff) throw new SigningError('zip_unsupported', `extra field of ${extra.length} bytes exceeds the 65535-byte limit (APPNOTE 4.4.11)`);
}

export const needs64 = (value: number): boolean => value >= ZIP64_MARKER_32;

/**
 * APPNOTE 4.5.3: a Zip64 field holding `values` in order (usize, csize, offset: callers pass only
 * those that are present), with every other extra field of `extra` kept after it.
 */
export function withZip64Field(extra: Buffer, values: number[]): Buffer {
  const others = parseExtraFields(extra).fields.filter((f) => f.id !== EXTRA_ZIP64);
  if (values.length === 0) return serializeExtraFields(others);
  const data = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => writeU64(data, v, i * 8));
  return serializeExtraFields([{ id: EXTRA_ZIP64, data }, ...others]);
}

export interface EndRecordsInput {
  entryCount: number;
  centralDirectoryOffset: number;
  centralDirectorySize: number;
  comment: Buffer;
  allowZip64: boolean;
}

/**
 * The records after the central directory: a Zip64 EOCD record and locator when the count, size
 * or offset overflow the classic fields (APPNOTE 4.4.1.4), then the classic EOCD, whose
 * overflowing fields hold the all-ones markers.
 */
export function buildEndRecords(input: EndRecordsInput): Buffer {
  const { entryCount, centralDirectoryOffset: cdOffset, centralDirectorySize: cdSize, comment } = input;
  if (comment.length > 0xffff) throw new SigningError('zip_unsupported', 'archive comment longer than 65535 bytes (APPNOTE 4.3.16)');
  const countOverflows = entryCount >= ZIP64_MARKER_16;
  const zip64 = countOverflows || needs64(cdSize) || needs64(cdOffset);
  const parts: Buffer[] = [];
  if (zip64) {
    if (!input.allowZip64) throw new SigningError('zip_unsupported', `archive needs Zip64 (${entryCount} entries, central directory at ${cdOffset}) but Zip64 is not allowed here`);
    const record = Buffer.alloc(ZIP64_EOCD_SIZE);
    record.writeUInt32LE(ZIP64_EOCD_SIGNATURE, 0);
    writeU64(record, ZIP64_EOCD_SIZE - 12, 4);
    record.writeUInt16LE((3 << 8) | VERSION_ZIP64, 12);
    record.writeUInt16LE(VERSION_ZIP64, 14);
    writeU64(record, entryCount, 24);
    writeU64(record, entryCount, 32);
    writeU64(record, cdSize, 40);
    writeU64(record, cdOffset, 48);
    const locator = Buffer.alloc(ZIP64_LOCATOR_SIZE);
    locator.writeUInt32LE(ZIP64_LOCATOR_SIGNATURE, 0);
    writeU64(locator, cdOffset + cdSize, 8);
    locator.writeUInt32LE(1, 16);
    parts.push(record, locator);
  }
  const eocd = Buffer.alloc(EOCD_SIZE + comment.length);
  eocd.writeUInt32LE(EOCD_SIGNATURE, 0);
  const count16 = countOverflows ? ZIP64_MARKER_16 : entryCount;
  eocd.writeUInt16LE(count16, 8);
  eocd.writeUInt16LE(count16, 10);
  eocd.writeUInt32LE(needs64(cdSize) ? ZIP64_MARKER_32 : cdSize, 12);
  eocd.writeUInt32LE(needs64(cdOffset) ? ZIP64_MARKER_32 : cdOffset, 16);
  eocd.writeUInt16LE(comment.length, 20);
  comment.copy(eocd, EOCD_SIZE);
  parts.push(eocd);
  return Buffer.concat(parts);
}
