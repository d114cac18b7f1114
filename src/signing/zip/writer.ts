// ZipWriter: writes an archive sequentially to a DataSink. Entries are either copied raw from a
// ZipReader (compressed bytes untouched, local header kept except for alignment) or added new
// (stored or deflated). finishEntries() then yields the central directory and end records so
// an APK signer can digest them and insert its signing block before writing the tail.
import type { DataSource } from '../data-source.ts';
import type { DataSink } from '../data-sink.ts';
import { SigningError } from '../errors.ts';
import { DEFAULT_ALIGNMENT, realignedExtra, type AlignmentPolicy, type RawAlignmentMode } from './alignment.ts';
import { readRawChunks } from './entry-content.ts';
import type { ZipEntry } from './entry.ts';
import { FLAG_DATA_DESCRIPTOR, LOCAL_HEADER_SIZE, ZIP64_MARKER_32 } from './format.ts';
import { buildCentralRecord, buildEndRecords, needs64, VERSION_ZIP64, withLocalHeaderOffset, withZip64Field } from './headers.ts';
import { writeNewEntry, type NewEntryData, type NewEntryOptions } from './new-entry.ts';
import { checkSafeName, duplicateKey } from './names.ts';
import { ZipReader } from './reader.ts';
import type { WrittenEntry } from './written-entry.ts';

export interface ZipWriterOptions {
  /** Allow Zip64 structures when sizes, offsets or the entry count need them (default true; APKs: false). */
  allowZip64?: boolean;
  /** Alignment of stored entries (addEntry and realigned raw copies). */
  alignment?: Partial<AlignmentPolicy>;
}

export interface RawCopyOptions {
  /** Default 'preserve' (apksigner <= 34 behaviour). */
  alignment?: RawAlignmentMode;
  /**
   * 'drop' (default): an entry written with a data descriptor gets its CRC and sizes put in the
   * local header, bit 3 cleared and the descriptor left out. 'keep': the local header and the
   * descriptor are copied verbatim, as apksig does (needed for byte parity with apksigner).
   */
  dataDescriptor?: 'drop' | 'keep';
}

export type { WrittenEntry } from './written-entry.ts';

export interface CentralDirectoryPlan {
  /** Where the entries end: the offset at which anything inserted before the CD starts. */
  readonly entriesEnd: number;
  readonly entryCount: number;
  readonly centralDirectory: Buffer;
  /** (Zip64 EOCD + locator when needed +) EOCD for a central directory placed at `cdOffset`. */
  endRecords(cdOffset: number): Buffer;
}

export interface ZipWriteResult {
  entriesEnd: number;
  centralDirectoryOffset: number;
  centralDirectorySize: number;
  eocdOffset: number;
  size: number;
}

export class ZipWriter {
  readonly sink: DataSink;
  private readonly allowZip64: boolean;
  private readonly policy: AlignmentPolicy;
  private readonly written: WrittenEntry[] = [];
  private readonly names = new Set<string>();
  private plan: CentralDirectoryPlan | null = null;
  // Set when a write failed part-way: the sink then holds a partial entry, so nothing may follow.
  private failure: unknown = null;
  private comment: Buffer = Buffer.alloc(0);
  private done = false;

  constructor(sink: DataSink, options: ZipWriterOptions = {}) {
    this.sink = sink;
    this.allowZip64 = options.allowZip64 ?? true;
    this.policy = { ...DEFAULT_ALIGNMENT, ...options.alignment };
  }

  get position(): number {
    return this.sink.position;
  }

  get entries(): readonly WrittenEntry[] {
    return this.written;
  }

  /**
   * Copies `entry` from `from` without recompressing: its local header (alignment field adjusted
   * per `options.alignment`, apksig-style), its compressed bytes and, with 'keep', its data
   * descriptor. The central record is the input's, byte for byte, with the new offset.
   */
  async addRaw(entry: ZipEntry, from: ZipReader | DataSource, options: RawCopyOptions = {}): Promise<WrittenEntry> {
    return await this.guard(entry.name, () => this.copyEntry(entry, from, options));
  }

  private async copyEntry(entry: ZipEntry, from: ZipReader | DataSource, options: RawCopyOptions): Promise<WrittenEntry> {
    // An entry opened as discarded was excused checks that a copy needs (ZipOpenOptions.discarded).
    if (entry.tolerated.length > 0) throw entry.tolerated[0];
    const source = from instanceof ZipReader ? from.source : from;
    const offset = this.sink.position;
    const nameEnd = LOCAL_HEADER_SIZE + entry.nameBytes.length;
    const localFlags = entry.localHeader.readUInt16LE(6);
    const drop = (options.dataDescriptor ?? 'drop') === 'drop' && (localFlags & FLAG_DATA_DESCRIPTOR) !== 0;
    const sizes64 = needs64(entry.compressedSize) || needs64(entry.uncompressedSize);

    let header = Buffer.from(entry.localHeader);
    let baseExtra = entry.localExtra;
    let mode = options.alignment ?? 'preserve';
    if (drop) {
      // APPNOTE 4.4.4 bit 3 cleared: CRC and sizes now live in the local header (Zip64 if large).
      header.writeUInt16LE(localFlags & ~FLAG_DATA_DESCRIPTOR, 6);
      header.writeUInt32LE(entry.crc32, 14);
      header.writeUInt32LE(sizes64 ? ZIP64_MARKER_32 : entry.compressedSize, 18);
      header.writeUInt32LE(sizes64 ? ZIP64_MARKER_32 : entry.uncompressedSize, 22);
      if (sizes64) {
        baseExtra = withZip64Field(baseExtra, [entry.uncompressedSize, entry.compressedSize]);
        // The header changed length, so a verbatim alignment can no longer be relied on.
        if (mode === 'preserve') mode = 'force';
      }
    }
    const aligned = realignedExtra({ ...entry, localExtra: baseExtra }, offset, offset + nameEnd, mode, this.policy);
    const extra = aligned ?? baseExtra;
    if (extra !== entry.localExtra) {
      if (extra.length > 0xffff) throw new SigningError('zip_unsupported', `extra field of ${JSON.stringify(entry.name)} would exceed 65535 bytes`);
      const rebuilt = Buffer.alloc(nameEnd + extra.length);
      header.copy(rebuilt, 0, 0, nameEnd);
      extra.copy(rebuilt, nameEnd);
      rebuilt.writeUInt16LE(extra.length, 28);
      header = rebuilt;
    }
    // Refuse before writing anything, so that the writer stays usable.
    if ((sizes64 || needs64(offset)) && !this.allowZip64) throw this.zip64Refused(entry.name);

    await this.sink.write(header);
    for await (const chunk of readRawChunks(source, entry)) await this.sink.write(chunk);
    if (!drop && entry.dataDescriptorSize > 0) {
      await this.sink.write(await source.read(entry.dataOffset + entry.compressedSize, entry.dataDescriptorSize));
    }

    const record = this.copiedCentralRecord(entry, offset, drop);
    return this.record({
      name: entry.name, localHeaderOffset: offset, dataOffset: offset + header.length, method: entry.method, crc32: entry.crc32,
      compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize, centralRecord: record,
    });
  }

  /** Adds a new entry from a buffer or a stream of buffers (see NewEntryOptions). */
  async addEntry(name: string, data: NewEntryData, options: NewEntryOptions = {}): Promise<WrittenEntry> {
    checkSafeName(name);
    return await this.guard(name, async () => this.record(await writeNewEntry(this.sink, name, data, options, { allowZip64: this.allowZip64, policy: this.policy })));
  }

  /** Writes bytes that belong to no entry (e.g. the input's bytes between entries, kept by apksig). */
  async writeBytes(data: Buffer): Promise<void> {
    await this.guard(null, () => this.sink.write(data));
  }

  /** Copies [offset, offset + length) of `source` verbatim, in bounded chunks. */
  async copyBytes(source: DataSource, offset: number, length: number): Promise<void> {
    await this.guard(null, async () => {
      const chunk = 1024 * 1024;
      for (let done = 0; done < length; done += chunk) await this.sink.write(await source.read(offset + done, Math.min(chunk, length - done)));
    });
  }

  /**
   * Ends the entries section. The central directory lists entries in `order` (default: the order
   * written; apksig keeps the input's CD order, which can differ from the file order).
   */
  finishEntries(options: { order?: readonly WrittenEntry[]; comment?: Buffer } = {}): CentralDirectoryPlan {
    this.checkOpen();
    const order = options.order ?? this.written;
    if (options.order !== undefined) {
      const listed = new Set(order);
      if (order.length !== this.written.length || listed.size !== order.length || this.written.some((e) => !listed.has(e))) {
        throw new RangeError('finishEntries order must list every written entry exactly once');
      }
    }
    const centralDirectory = Buffer.concat(order.map((e) => e.centralRecord));
    const comment = options.comment ?? Buffer.alloc(0);
    const allowZip64 = this.allowZip64;
    const entryCount = order.length;
    const plan: CentralDirectoryPlan = {
      entriesEnd: this.sink.position,
      entryCount,
      centralDirectory,
      endRecords: (cdOffset: number) => buildEndRecords({ entryCount, centralDirectoryOffset: cdOffset, centralDirectorySize: centralDirectory.length, comment, allowZip64 }),
    };
    this.plan = plan;
    this.comment = comment;
    return plan;
  }

  /** Writes `beforeCentralDirectory` (e.g. padding + APK Signing Block), the CD and end records. */
  async writeTail(beforeCentralDirectory: Buffer = Buffer.alloc(0)): Promise<ZipWriteResult> {
    const plan = this.plan;
    if (plan === null) throw new Error('writeTail called before finishEntries');
    if (this.done) throw new Error('ZipWriter already finished');
    if (this.failure !== null) throw new Error('ZipWriter: an earlier write failed', { cause: this.failure });
    if (this.sink.position !== plan.entriesEnd) throw new Error('bytes were written between finishEntries and writeTail');
    this.done = true;
    await this.sink.write(beforeCentralDirectory);
    const cdOffset = this.sink.position;
    await this.sink.write(plan.centralDirectory);
    const end = plan.endRecords(cdOffset);
    await this.sink.write(end);
    const size = this.sink.position;
    return {
      entriesEnd: plan.entriesEnd, centralDirectoryOffset: cdOffset, centralDirectorySize: plan.centralDirectory.length,
      eocdOffset: size - 22 - this.comment.length, size,
    };
  }

  /** finishEntries + writeTail for archives with nothing before the central directory. */
  async finish(options: { order?: readonly WrittenEntry[]; comment?: Buffer } = {}): Promise<ZipWriteResult> {
    this.finishEntries(options);
    return this.writeTail();
  }

  private copiedCentralRecord(entry: ZipEntry, offset: number, clearDescriptorFlag: boolean): Buffer {
    const original = entry.centralRecord;
    const offsetSlot = original.readUInt32LE(42);
    let record: Buffer;
    if (offsetSlot !== ZIP64_MARKER_32 && !needs64(offset)) {
      record = withLocalHeaderOffset(original, offset);
    } else {
      const n = entry.nameBytes.length;
      const u64 = needs64(entry.uncompressedSize);
      const c64 = needs64(entry.compressedSize);
      const o64 = needs64(offset);
      const values = [...(u64 ? [entry.uncompressedSize] : []), ...(c64 ? [entry.compressedSize] : []), ...(o64 ? [offset] : [])];
      record = buildCentralRecord({
        versionMadeBy: entry.versionMadeBy,
        versionNeeded: values.length > 0 ? Math.max(entry.versionNeeded, VERSION_ZIP64) : entry.versionNeeded,
        flags: entry.flags, method: entry.method, dosTime: entry.dosTime, dosDate: entry.dosDate, crc32: entry.crc32,
        compressedSize: c64 ? ZIP64_MARKER_32 : entry.compressedSize,
        uncompressedSize: u64 ? ZIP64_MARKER_32 : entry.uncompressedSize,
        nameBytes: original.subarray(46, 46 + n),
        extra: withZip64Field(entry.centralExtra, values),
        comment: entry.comment,
        internalAttributes: entry.internalAttributes, externalAttributes: entry.externalAttributes,
        localHeaderOffset: o64 ? ZIP64_MARKER_32 : offset,
      });
    }
    if (clearDescriptorFlag) record.writeUInt16LE(record.readUInt16LE(8) & ~FLAG_DATA_DESCRIPTOR, 8);
    return record;
  }

  private record(entry: WrittenEntry): WrittenEntry {
    this.written.push(entry);
    return entry;
  }

  private checkOpen(): void {
    if (this.plan !== null) throw new Error('ZipWriter: entries are already finished');
    if (this.failure !== null) throw new Error('ZipWriter: an earlier write failed', { cause: this.failure });
  }

  /**
   * Runs one write operation, claiming `name` first. Refusals raised before anything is written
   * (a Zip64 refusal, a bad option) release the name and leave the writer usable; a failure after
   * bytes reached the sink does not, since the sink then holds a partial entry.
   */
  private async guard<T>(name: string | null, operation: () => Promise<T>): Promise<T> {
    this.checkOpen();
    const key = name === null ? null : duplicateKey(name);
    if (key !== null && this.names.has(key)) throw new SigningError('zip_duplicate_entry', `entry ${JSON.stringify(name)} was already written`, { details: { name } });
    if (key !== null) this.names.add(key);
    const start = this.sink.position;
    try {
      return await operation();
    } catch (error) {
      if (this.sink.position !== start) this.failure = error;
      else if (key !== null) this.names.delete(key);
      throw error;
    }
  }

  private zip64Refused(name: string): SigningError {
    return new SigningError('zip_unsupported', `entry ${JSON.stringify(name)} needs Zip64, which is not allowed for this archive`, { details: { name } });
  }
}
