// The zip records the signer writes itself, with apksig's field values (LocalFileRecord
// outputRecordWithDeflateCompressedData, CentralDirectoryRecord.createWithDeflateCompressedData,
// EocdRecord.createWithModifiedCentralDirectoryInfo); the byte layouts (APPNOTE 4.3.7 / 4.3.12)
// and input central records moved to a new offset come from the zip writer's builders. The EoCD
// is the input's with new counts and offsets, as apksig does, not a fresh one (buildEndRecords):
// fields such as the disk numbers of the input are kept.
import { crc32 } from 'node:zlib';
import { FLAG_UTF8, METHOD_DEFLATED } from '../../zip/format.ts';
import { buildCentralRecord, buildLocalHeader, VERSION_DEFAULT, type HeaderFields } from '../../zip/headers.ts';

export interface DeflatedFile {
  readonly name: string;
  readonly compressed: Buffer;
  readonly crc32: number;
  readonly uncompressedSize: number;
}

export function describeDeflated(name: string, data: Buffer, compressed: Buffer): DeflatedFile {
  return { name, compressed, crc32: crc32(data) >>> 0, uncompressedSize: data.length };
}

function fields(file: DeflatedFile, dosTime: number, dosDate: number): HeaderFields {
  return {
    versionNeeded: VERSION_DEFAULT, flags: FLAG_UTF8, method: METHOD_DEFLATED, dosTime, dosDate, crc32: file.crc32,
    compressedSize: file.compressed.length, uncompressedSize: file.uncompressedSize, nameBytes: Buffer.from(file.name, 'utf8'), extra: Buffer.alloc(0),
  };
}

/** Local file header for a new entry: needs 2.0, UTF-8 name (APPNOTE 4.4.4 bit 11), no extra field, no data descriptor. */
export function newLocalHeader(file: DeflatedFile, dosTime: number, dosDate: number): Buffer {
  return buildLocalHeader(fields(file, dosTime, dosDate));
}

/** Central directory record for a new entry: made by / needs 2.0, no extra, no comment, attributes 0. */
export function newCentralRecord(file: DeflatedFile, dosTime: number, dosDate: number, localHeaderOffset: number): Buffer {
  return buildCentralRecord({ ...fields(file, dosTime, dosDate), versionMadeBy: VERSION_DEFAULT, internalAttributes: 0, externalAttributes: 0, localHeaderOffset, comment: Buffer.alloc(0) });
}

/** The input EoCD (comment included) with new entry counts, CD size and CD offset. */
export function modifiedEocd(eocd: Buffer, entryCount: number, cdSize: number, cdOffset: number): Buffer {
  const copy = Buffer.from(eocd);
  copy.writeUInt16LE(entryCount, 8);
  copy.writeUInt16LE(entryCount, 10);
  copy.writeUInt32LE(cdSize, 12);
  copy.writeUInt32LE(cdOffset, 16);
  return copy;
}

/** apksig ZipUtils.setZipEocdCentralDirectoryOffset. */
export function setEocdCentralDirectoryOffset(eocd: Buffer, offset: number): Buffer {
  const copy = Buffer.from(eocd);
  copy.writeUInt32LE(offset, 16);
  return copy;
}
