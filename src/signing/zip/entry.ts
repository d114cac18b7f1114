// What the reader knows about one entry, taken from its central directory record (APPNOTE 4.3.12)
// and its local file header (APPNOTE 4.3.7).
import type { SigningError } from '../errors.ts';
import type { ExtraField } from './extra-fields.ts';

export interface ZipEntry {
  /** Position of the record in the central directory (0-based). */
  readonly index: number;
  readonly name: string;
  /** The name exactly as stored (the writer copies these bytes). */
  readonly nameBytes: Buffer;
  readonly versionMadeBy: number;
  readonly versionNeeded: number;
  /** General purpose bit flags from the central directory (APPNOTE 4.4.4). */
  readonly flags: number;
  /** 0 = stored, 8 = deflated; nothing else passes the reader, except in a discarded entry. */
  readonly method: number;
  readonly dosTime: number;
  readonly dosDate: number;
  readonly crc32: number;
  /** Values after applying the Zip64 extra field. */
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly localHeaderOffset: number;
  /** Offset of the first byte of (compressed) data: after the local header's name and extra. */
  readonly dataOffset: number;
  /** Bytes of the data descriptor after the data (0 when flag bit 3 is clear). */
  readonly dataDescriptorSize: number;
  /** dataOffset + compressedSize + dataDescriptorSize: where the next entry may start. */
  readonly endOffset: number;
  readonly internalAttributes: number;
  readonly externalAttributes: number;
  /** Unix st_mode from the upper 16 bits of the external attributes when made on Unix/macOS. */
  readonly unixMode: number | null;
  readonly isDirectory: boolean;
  readonly isSymlink: boolean;
  /** Whether the central record carries a Zip64 extra field. */
  readonly zip64: boolean;
  readonly centralExtra: Buffer;
  readonly centralExtraFields: readonly ExtraField[];
  readonly comment: Buffer;
  /** The whole central directory record, byte for byte (apksig copies it with a new offset). */
  readonly centralRecord: Buffer;
  /** The whole local file header (30 bytes + name + extra), byte for byte. */
  readonly localHeader: Buffer;
  readonly localExtra: Buffer;
  /** Opened as one the caller drops unread (ZipOpenOptions.discarded), with the lighter checks. */
  readonly discarded: boolean;
  /** The checks a discarded entry failed that a kept entry would have been refused for ([] otherwise). */
  readonly tolerated: readonly SigningError[];
  /** Why a discarded entry's data cannot be read (method, encryption, sizes), or null: every read throws it. */
  readonly unreadable: SigningError | null;
}

/** The raw fields of a local file header (APPNOTE 4.3.7), as parsed, before any validation. */
export interface LocalHeaderFields {
  versionNeeded: number;
  flags: number;
  method: number;
  dosTime: number;
  dosDate: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  nameLength: number;
  extraLength: number;
}
