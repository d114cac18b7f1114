// Extra fields (APPNOTE 4.5): parsing the header-ID/size list, the Zip64 extended information
// field, the Unix timestamp/uid fields, and building the Android alignment field.
import { SigningError } from '../errors.ts';
import { EXTRA_ANDROID_ALIGNMENT, EXTRA_EXTENDED_TIMESTAMP, EXTRA_UNIX_UID_GID, EXTRA_ZIP64, ZIP64_MARKER_16, ZIP64_MARKER_32, readU64 } from './format.ts';

export interface ExtraField {
  readonly id: number;
  /** The field's data, without its 4-byte header. */
  readonly data: Buffer;
}

/**
 * APPNOTE 4.5.1: a sequence of (u16 id, u16 size, data). Real archives (zipalign, old jar tools)
 * sometimes end with a few zero bytes of padding that are too short to be a field; those are
 * tolerated and reported as `trailing` so a rewriter can drop or keep them.
 */
export function parseExtraFields(extra: Buffer): { fields: ExtraField[]; trailing: Buffer } {
  const fields: ExtraField[] = [];
  const end = collectFields(extra, fields);
  return { fields, trailing: extra.subarray(end) };
}

/**
 * The fields alone, as parseExtraFields finds them; one shared empty list when there are none.
 * For the central directory's parser, which runs for every entry of every archive opened: it
 * needs neither the trailing bytes nor a list of its own per field-less entry (an APK's central
 * records usually have no extra field at all).
 */
export function extraFieldList(extra: Buffer): readonly ExtraField[] {
  if (extra.length < 4) return NO_FIELDS;
  const fields: ExtraField[] = [];
  collectFields(extra, fields);
  return fields;
}

const NO_FIELDS: readonly ExtraField[] = Object.freeze([]);

/** Appends the fields of `extra` to `fields`; returns where the last whole field ends. */
function collectFields(extra: Buffer, fields: ExtraField[]): number {
  let pos = 0;
  while (pos + 4 <= extra.length) {
    const id = extra.readUInt16LE(pos);
    const size = extra.readUInt16LE(pos + 2);
    if (pos + 4 + size > extra.length) break;
    fields.push({ id, data: extra.subarray(pos + 4, pos + 4 + size) });
    pos += 4 + size;
  }
  return pos;
}

export function serializeExtraFields(fields: readonly ExtraField[]): Buffer {
  const parts: Buffer[] = [];
  for (const field of fields) {
    const header = Buffer.alloc(4);
    header.writeUInt16LE(field.id, 0);
    header.writeUInt16LE(field.data.length, 2);
    parts.push(header, field.data);
  }
  return Buffer.concat(parts);
}

export interface Zip64Values {
  uncompressedSize: number;
  compressedSize: number;
  localHeaderOffset: number;
  diskNumber: number;
}

/**
 * APPNOTE 4.5.3: the Zip64 field holds, in this order, only the values whose 32-bit (or 16-bit
 * disk) slot in the header is all ones. A marker without its Zip64 value is an error.
 */
export function applyZip64(fields: readonly ExtraField[], values: Zip64Values, describe: () => string): Zip64Values & { zip64: boolean } {
  const needs = {
    u: values.uncompressedSize === ZIP64_MARKER_32,
    c: values.compressedSize === ZIP64_MARKER_32,
    o: values.localHeaderOffset === ZIP64_MARKER_32,
    d: values.diskNumber === ZIP64_MARKER_16,
  };
  const field = fields.find((f) => f.id === EXTRA_ZIP64);
  if (!needs.u && !needs.c && !needs.o && !needs.d) return { ...values, zip64: field !== undefined };
  // Named only on this rare path: the caller's description is built for every record otherwise.
  const what = describe();
  if (field === undefined) throw new SigningError('zip_invalid', `${what}: 0xFFFFFFFF size/offset without a Zip64 extra field (APPNOTE 4.5.3)`);
  const data = field.data;
  let pos = 0;
  const next = (label: string): number => {
    if (pos + 8 > data.length) throw new SigningError('zip_invalid', `${what}: Zip64 extra field too short for ${label} (APPNOTE 4.5.3)`);
    const value = readU64(data, pos, `${what}: Zip64 ${label}`);
    pos += 8;
    return value;
  };
  const result = { ...values, zip64: true };
  if (needs.u) result.uncompressedSize = next('uncompressed size');
  if (needs.c) result.compressedSize = next('compressed size');
  if (needs.o) result.localHeaderOffset = next('local header offset');
  if (needs.d) {
    if (pos + 4 > data.length) throw new SigningError('zip_invalid', `${what}: Zip64 extra field too short for disk number`);
    result.diskNumber = data.readUInt32LE(pos);
  }
  return result;
}

export interface UnixExtras {
  /** Modification time from the extended-timestamp field 0x5455, seconds since the epoch. */
  mtime: number | null;
  uid: number | null;
  gid: number | null;
}

/** Info-ZIP extra fields 0x5455 (extended timestamp) and 0x7875 (uid/gid); see SPECIFICATION.md. */
export function parseUnixExtras(fields: readonly ExtraField[]): UnixExtras {
  const result: UnixExtras = { mtime: null, uid: null, gid: null };
  const ts = fields.find((f) => f.id === EXTRA_EXTENDED_TIMESTAMP);
  // Flags byte, bit 0 = mtime present, then the 32-bit mtime.
  if (ts !== undefined && ts.data.length >= 5 && (ts.data[0]! & 1) !== 0) result.mtime = ts.data.readInt32LE(1);
  const ux = fields.find((f) => f.id === EXTRA_UNIX_UID_GID);
  if (ux !== undefined && ux.data.length >= 3 && ux.data[0] === 1) {
    const uidSize = ux.data[1]!;
    if (uidSize <= 6 && ux.data.length >= 3 + uidSize) {
      result.uid = uidSize === 0 ? 0 : ux.data.readUIntLE(2, uidSize);
      const gidSize = ux.data[2 + uidSize]!;
      if (gidSize <= 6 && ux.data.length >= 3 + uidSize + gidSize) result.gid = gidSize === 0 ? 0 : ux.data.readUIntLE(3 + uidSize, gidSize);
    }
  }
  return result;
}

/**
 * apksig ApkSigner "Android ZIP Alignment Extra Field": u16 0xD935, u16 size, u16 alignment,
 * then zero padding; `padding` is the number of zero bytes after the alignment value.
 */
export function androidAlignmentField(alignment: number, padding: number): ExtraField {
  const data = Buffer.alloc(2 + padding);
  data.writeUInt16LE(alignment, 0);
  return { id: EXTRA_ANDROID_ALIGNMENT, data };
}

/**
 * apksig ApkSigner.getInputJarEntryDataAlignmentMultiple: the alignment declared by the first
 * 0xD935 field, or null when there is none or it is shorter than its 2-byte value (then the
 * name-based default applies). A declared 0 or 1 means "no alignment" and is returned as is.
 */
export function declaredAndroidAlignment(fields: readonly ExtraField[]): number | null {
  const field = fields.find((f) => f.id === EXTRA_ANDROID_ALIGNMENT);
  if (field === undefined || field.data.length < 2) return null;
  return field.data.readUInt16LE(0);
}
