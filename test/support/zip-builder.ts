// Builds zip archives in memory for tests, independently of src/signing/zip's writer, so reader
// tests do not trust the code under test. Every field can be overridden to make malformed input.
import { crc32, deflateRawSync } from 'node:zlib';

export interface BuildEntry {
  name: string | Buffer;
  data?: Buffer | string;
  method?: number;
  flags?: number;
  versionMadeBy?: number;
  externalAttributes?: number;
  dosTime?: number;
  dosDate?: number;
  /** Overrides for the central record (defaults: the real values). */
  crc32?: number;
  compressedSize?: number;
  uncompressedSize?: number;
  /** Central record points here instead of at this entry's own local header. */
  localHeaderOffset?: number;
  /** Local header overrides. */
  localName?: string | Buffer;
  localMethod?: number;
  localFlags?: number;
  localExtra?: Buffer;
  centralExtra?: Buffer;
  /** Write a data descriptor after the data (sets flag bit 3 unless flags given). */
  dataDescriptor?: 'signed' | 'unsigned';
  /** Put Zip64 extra fields (with 0xFFFFFFFF markers) on this entry even though it is small. */
  zip64?: boolean;
  /** Raw bytes to use as the stored/compressed payload instead of compressing `data`. */
  rawData?: Buffer;
}

export interface BuildOptions {
  comment?: Buffer | string;
  /** Bytes before the first entry (offsets are not adjusted: they then point wrong). */
  prefix?: Buffer;
  /** Bytes between the last entry and the central directory (e.g. an APK Signing Block). */
  beforeCentralDirectory?: Buffer;
  /** Write a Zip64 EOCD record + locator with markers in the classic EOCD. */
  zip64Eocd?: boolean;
  eocd?: { entryCount?: number; cdSize?: number; cdOffset?: number; diskNumber?: number };
  /** Bytes appended to the central directory without counting them as a record. */
  cdTrailing?: Buffer;
}

export interface BuiltZip {
  bytes: Buffer;
  localHeaderOffsets: number[];
  dataOffsets: number[];
  cdOffset: number;
  eocdOffset: number;
}

const u16 = (v: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16LE(v); return b; };
const u32 = (v: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); return b; };
const u64 = (v: number): Buffer => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); return b; };
const bytesOf = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v, 'utf8') : v);

export function buildZip(entries: BuildEntry[], options: BuildOptions = {}): BuiltZip {
  const parts: Buffer[] = [];
  let pos = 0;
  const push = (b: Buffer): void => { parts.push(b); pos += b.length; };
  if (options.prefix) push(options.prefix);
  const central: Buffer[] = [];
  const localHeaderOffsets: number[] = [];
  const dataOffsets: number[] = [];
  for (const entry of entries) {
    const name = bytesOf(entry.name);
    const data = bytesOf(entry.data ?? '');
    const method = entry.method ?? 8;
    const payload = entry.rawData ?? (method === 8 ? deflateRawSync(data) : data);
    const crc = crc32(data);
    const descriptor = entry.dataDescriptor !== undefined;
    const flags = entry.flags ?? ((descriptor ? 0x08 : 0) | 0x0800);
    const localFlags = entry.localFlags ?? flags;
    const offset = pos;
    localHeaderOffsets.push(offset);
    const zip64Extra = (values: number[]): Buffer => Buffer.concat([u16(1), u16(values.length * 8), ...values.map(u64)]);
    const localExtra = entry.localExtra ?? (entry.zip64 ? zip64Extra([data.length, payload.length]) : Buffer.alloc(0));
    const localName = bytesOf(entry.localName ?? name);
    const sizeField = (v: number): Buffer => (entry.zip64 ? u32(0xffffffff) : u32(v));
    push(Buffer.concat([
      u32(0x04034b50), u16(20), u16(localFlags), u16(entry.localMethod ?? method), u16(entry.dosTime ?? 0x6000), u16(entry.dosDate ?? 0x5a21),
      u32(descriptor ? 0 : crc), descriptor ? u32(0) : sizeField(payload.length), descriptor ? u32(0) : sizeField(data.length),
      u16(localName.length), u16(localExtra.length), localName, localExtra,
    ]));
    dataOffsets.push(pos);
    push(payload);
    if (entry.dataDescriptor === 'signed') push(Buffer.concat([u32(0x08074b50), u32(crc), u32(payload.length), u32(data.length)]));
    if (entry.dataDescriptor === 'unsigned') push(Buffer.concat([u32(crc), u32(payload.length), u32(data.length)]));
    const cdOffsetValue = entry.localHeaderOffset ?? offset;
    const centralExtra = entry.centralExtra ?? (entry.zip64 ? zip64Extra([entry.uncompressedSize ?? data.length, entry.compressedSize ?? payload.length, cdOffsetValue]) : Buffer.alloc(0));
    central.push(Buffer.concat([
      u32(0x02014b50), u16(entry.versionMadeBy ?? 0x0314), u16(20), u16(flags), u16(method), u16(entry.dosTime ?? 0x6000), u16(entry.dosDate ?? 0x5a21),
      u32(entry.crc32 ?? crc),
      entry.zip64 ? u32(0xffffffff) : u32(entry.compressedSize ?? payload.length),
      entry.zip64 ? u32(0xffffffff) : u32(entry.uncompressedSize ?? data.length),
      u16(name.length), u16(centralExtra.length), u16(0), u16(0), u16(0), u32(entry.externalAttributes ?? (0o100644 << 16)),
      entry.zip64 ? u32(0xffffffff) : u32(cdOffsetValue), name, centralExtra,
    ]));
  }
  if (options.beforeCentralDirectory) push(options.beforeCentralDirectory);
  const cdOffset = pos;
  const cd = Buffer.concat([...central, options.cdTrailing ?? Buffer.alloc(0)]);
  push(cd);
  const comment = bytesOf(options.comment ?? '');
  const count = options.eocd?.entryCount ?? entries.length;
  const cdSize = options.eocd?.cdSize ?? cd.length;
  const cdOff = options.eocd?.cdOffset ?? cdOffset;
  if (options.zip64Eocd) {
    const eocd64Offset = pos;
    push(Buffer.concat([u32(0x06064b50), u64(44), u16(0x031e), u16(45), u32(0), u32(0), u64(count), u64(count), u64(cdSize), u64(cdOff)]));
    push(Buffer.concat([u32(0x07064b50), u32(0), u64(eocd64Offset), u32(1)]));
  }
  const eocdOffset = pos;
  const z = options.zip64Eocd;
  push(Buffer.concat([
    u32(0x06054b50), u16(options.eocd?.diskNumber ?? 0), u16(0), u16(z ? 0xffff : count), u16(z ? 0xffff : count),
    u32(z ? 0xffffffff : cdSize), u32(z ? 0xffffffff : cdOff), u16(comment.length), comment,
  ]));
  return { bytes: Buffer.concat(parts), localHeaderOffsets, dataOffsets, cdOffset, eocdOffset };
}
