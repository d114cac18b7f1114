// ZipReader: opens an archive over a random-access DataSource, validates its structure up front
// (every check cites APPNOTE or apksig), and hands out entries and bounded content streams.
import type { Readable } from 'node:stream';
import type { DataSource } from '../data-source.ts';
import { SigningError } from '../errors.ts';
import { readCentralDirectory, readCentralDirectoryNames, type CentralRecord } from './central-directory.ts';
import { openContentStream, openRawStream, readContentChunks, readEntryBytes, readRawChunks } from './entry-content.ts';
import type { ZipEntry } from './entry.ts';
import { readEndOfCentralDirectory } from './eocd.ts';
import { checkRecords, type Leniency } from './entry-checks.ts';
import { EXTRA_ZIP64, FLAG_DATA_DESCRIPTOR, LOCAL_HEADER_SIZE, METHOD_STORED } from './format.ts';
import { parseExtraFields } from './extra-fields.ts';
import { dataDescriptorLength, checkLocalHeader, localHeaderLength } from './local-header.ts';
import { resolveLimits, type ZipLimits } from './limits.ts';
import { symlinkTargetIsContained } from './names.ts';
import { entryKind } from './unix-mode.ts';

export interface ZipGeometry {
  /** Offset of the first local header (0 unless bytes were prepended), or the CD offset if empty. */
  firstEntryOffset: number;
  /** End of the last entry's data (and data descriptor); 0 for an empty archive. */
  entriesEnd: number;
  centralDirectoryOffset: number;
  centralDirectorySize: number;
  /** Zip64 EOCD record offset, or null for a classic archive. */
  zip64EocdOffset: number | null;
  eocdOffset: number;
  /** The classic EOCD record and comment, byte for byte. */
  eocd: Buffer;
  comment: Buffer;
  /** Bytes between the last entry and the CD (an APK Signing Block lives here). */
  bytesBeforeCentralDirectory: number;
}

const HEADER_BATCH = 64 * 1024;
// Largest stretch of entry data a window spans to reach the next header: beyond it, a read of
// its own is cheaper than the bytes (bench/apk.ts: 1,500 images of 48 KiB made windows read
// 22 MiB of image data to find 4,600 headers).
const HEADER_GAP = 4 * 1024;
const DEFAULT_READ_ENTRY_MAX = 32 * 1024 * 1024;
// Local extra fields usually match the central ones; allow some slack before a second read.
const EXTRA_SLACK = 64;

export interface ZipOpenOptions {
  limits?: Partial<ZipLimits>;
  /**
   * Names of entries the caller will drop without extracting or copying them (an APK re-sign
   * drops the old JAR signature files, as apksig does). Such an entry gets only the checks needed
   * to step over it - the ones apksig's LocalFileRecord.getRecord makes: local header signature,
   * name, CRC-32 and sizes, and its record inside the entries section - and exact duplicate names
   * stay refused. Anything else it fails is recorded in `entry.tolerated`; a read of its data
   * throws the first failure that concerns the data (`entry.unreadable`: method, encryption,
   * sizes). SPECIFICATION.md §2.6.
   */
  discarded?: (name: string) => boolean;
}

export class ZipReader {
  readonly source: DataSource;
  readonly limits: ZipLimits;
  /** Entries in central directory order. */
  readonly entries: readonly ZipEntry[];
  readonly geometry: ZipGeometry;
  private readonly byName: Map<string, ZipEntry>;
  private readonly inFileOrder: readonly ZipEntry[];

  private constructor(source: DataSource, limits: ZipLimits, entries: ZipEntry[], inFileOrder: ZipEntry[], geometry: ZipGeometry) {
    this.source = source;
    this.limits = limits;
    this.entries = entries;
    this.inFileOrder = inFileOrder;
    this.geometry = geometry;
    this.byName = new Map(entries.map((entry) => [entry.name, entry]));
  }

  /** Parses and validates the archive. The caller keeps ownership of `source` (and closes it). */
  static async open(source: DataSource, options: ZipOpenOptions = {}): Promise<ZipReader> {
    try {
      return await ZipReader.parse(source, resolveLimits(options.limits), options.discarded);
    } catch (error) {
      // A DataSource RangeError here means a structure pointed outside the file; I/O errors pass.
      if (error instanceof RangeError) throw new SigningError('zip_invalid', `zip structure points outside the file: ${error.message}`, { cause: error });
      throw error;
    }
  }

  /**
   * The entries' names alone (EOCD and the central directory's structure checked, nothing else
   * decoded, local headers not read): enough to tell what an archive holds. Whoever reads the
   * entries opens the archive with `open`, which checks everything; `signet sign` uses this to
   * pick the engine without parsing the directory twice.
   */
  static async readNames(source: DataSource, options: Pick<ZipOpenOptions, 'limits'> = {}): Promise<readonly string[]> {
    try {
      const end = await ZipReader.readEnd(source, resolveLimits(options.limits));
      return await readCentralDirectoryNames(source, end.centralDirectoryOffset, end.centralDirectorySize, end.entryCount);
    } catch (error) {
      if (error instanceof RangeError) throw new SigningError('zip_invalid', `zip structure points outside the file: ${error.message}`, { cause: error });
      throw error;
    }
  }

  /** The end of central directory record, held to the limits. */
  private static async readEnd(source: DataSource, limits: ZipLimits): Promise<Awaited<ReturnType<typeof readEndOfCentralDirectory>>> {
    const end = await readEndOfCentralDirectory(source);
    if (end.entryCount > limits.maxEntries) throw new SigningError('zip_bomb', `archive lists ${end.entryCount} entries, more than the limit of ${limits.maxEntries}`);
    if (end.centralDirectorySize > limits.maxCentralDirectorySize) throw new SigningError('zip_bomb', `central directory of ${end.centralDirectorySize} bytes exceeds the limit of ${limits.maxCentralDirectorySize}`);
    return end;
  }

  private static async readDirectory(source: DataSource, limits: ZipLimits): Promise<{ end: Awaited<ReturnType<typeof readEndOfCentralDirectory>>; records: CentralRecord[] }> {
    const end = await ZipReader.readEnd(source, limits);
    const records = await readCentralDirectory(source, end.centralDirectoryOffset, end.centralDirectorySize, end.entryCount);
    return { end, records };
  }

  private static async parse(source: DataSource, limits: ZipLimits, discarded: ((name: string) => boolean) | undefined): Promise<ZipReader> {
    const { end, records } = await ZipReader.readDirectory(source, limits);
    const leniencies = checkRecords(records, limits, discarded);
    const entries = await resolveLocalHeaders(source, records, leniencies, end.centralDirectoryOffset);
    const inFileOrder = [...entries].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset);
    const entriesEnd = inFileOrder.length === 0 ? 0 : inFileOrder[inFileOrder.length - 1]!.endOffset;
    const geometry: ZipGeometry = {
      firstEntryOffset: inFileOrder[0]?.localHeaderOffset ?? end.centralDirectoryOffset,
      entriesEnd,
      centralDirectoryOffset: end.centralDirectoryOffset,
      centralDirectorySize: end.centralDirectorySize,
      zip64EocdOffset: end.zip64EocdOffset,
      eocdOffset: end.eocdOffset,
      eocd: end.eocd,
      comment: end.comment,
      bytesBeforeCentralDirectory: end.centralDirectoryOffset - entriesEnd,
    };
    return new ZipReader(source, limits, entries, inFileOrder, geometry);
  }

  getEntry(name: string): ZipEntry | undefined {
    return this.byName.get(name);
  }

  /** Entries sorted by local header offset (the order apksig copies them in). */
  entriesInFileOrder(): ZipEntry[] {
    return [...this.inFileOrder];
  }

  /** The entry's stored (possibly compressed) bytes, in chunks of at most `chunkSize`. */
  rawChunks(entry: ZipEntry, chunkSize?: number): AsyncGenerator<Buffer> {
    return readRawChunks(this.source, entry, chunkSize);
  }

  openRawStream(entry: ZipEntry): Readable {
    return openRawStream(this.source, entry);
  }

  /** Uncompressed bytes; CRC-32, declared size and the zip-bomb limits are checked as they flow. */
  contentChunks(entry: ZipEntry): AsyncGenerator<Buffer> {
    return readContentChunks(this.source, entry, this.limits);
  }

  openContentStream(entry: ZipEntry): Readable {
    return openContentStream(this.source, entry, this.limits);
  }

  /**
   * The target of a symlink entry (at most 4096 bytes, PATH_MAX), refused with zip_unsafe_entry
   * when it is absolute or climbs out of the archive root.
   */
  async readSymlinkTarget(entry: ZipEntry): Promise<string> {
    if (!entry.isSymlink) throw new RangeError(`${JSON.stringify(entry.name)} is not a symlink`);
    const target = (await this.readEntry(entry, 4096)).toString('utf8');
    if (!symlinkTargetIsContained(entry.name, target)) {
      throw new SigningError('zip_unsafe_entry', `symlink ${JSON.stringify(entry.name)} points outside the archive (${JSON.stringify(target)})`, { details: { name: entry.name } });
    }
    return target;
  }

  /**
   * Whole uncompressed content of a small entry (plists, manifests, profiles); zip_bomb if it is
   * larger than `maxBytes` (default 32 MiB). Use contentChunks for anything that may be large.
   */
  readEntry(entry: ZipEntry, maxBytes: number = DEFAULT_READ_ENTRY_MAX): Promise<Buffer> {
    return readEntryBytes(this.source, entry, this.limits, maxBytes);
  }
}

/**
 * Reads every local header in file order through 64 KiB windows that cover several neighbouring
 * headers at once, then checks that entries neither overlap each other nor the central directory.
 * The windows are planned from the central directory and read a few at a time ahead of use: one
 * awaited read per window cost ~0.15 s for an APK with 1,500 medium-sized images (bench/apk.ts).
 */
async function resolveLocalHeaders(source: DataSource, records: CentralRecord[], leniencies: readonly (Leniency | null)[], cdOffset: number): Promise<ZipEntry[]> {
  const order = [...records].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset);
  const read = windowedReader(source, planWindows(order, cdOffset), cdOffset);

  const entries: ZipEntry[] = new Array(records.length);
  let previous: ZipEntry | null = null;
  for (let i = 0; i < order.length; i++) {
    const record = order[i]!;
    const leniency = leniencies[record.index]!;
    const offset = record.localHeaderOffset;
    if (previous !== null && offset < previous.endOffset) {
      throw new SigningError('zip_overlapping_entries', `entry ${JSON.stringify(record.name)} at ${offset} overlaps ${JSON.stringify(previous.name)} [${previous.localHeaderOffset}, ${previous.endOffset})`, { details: { name: record.name } });
    }
    if (offset + LOCAL_HEADER_SIZE > cdOffset) {
      throw new SigningError('zip_overlapping_entries', `local header of ${JSON.stringify(record.name)} at ${offset} is not before the central directory at ${cdOffset}`, { details: { name: record.name } });
    }
    const fixed = read.arrived(offset, LOCAL_HEADER_SIZE) ?? (await read(offset, LOCAL_HEADER_SIZE));
    const local = checkLocalHeader(fixed, record, leniency);
    const headerLength = localHeaderLength(local);
    if (offset + headerLength > cdOffset) {
      throw new SigningError('zip_overlapping_entries', `local header of ${JSON.stringify(record.name)} runs into the central directory`, { details: { name: record.name } });
    }
    const localHeader = Buffer.from(read.arrived(offset, headerLength) ?? (await read(offset, headerLength)));
    if (!localHeader.subarray(LOCAL_HEADER_SIZE, LOCAL_HEADER_SIZE + local.nameLength).equals(record.nameBytes)) {
      throw new SigningError('zip_invalid', `local header at ${offset} names a different entry than the central directory (${JSON.stringify(record.name)})`);
    }
    const localExtra = localHeader.subarray(LOCAL_HEADER_SIZE + local.nameLength);
    const dataOffset = offset + headerLength;
    // apksig LocalFileRecord.getRecord: a stored entry's data is its uncompressed size (the same
    // as the compressed one for every entry but a discarded one with inconsistent sizes).
    const dataEnd = dataOffset + (record.method === METHOD_STORED ? record.uncompressedSize : record.compressedSize);
    if (dataEnd > cdOffset) {
      throw new SigningError('zip_overlapping_entries', `data of ${JSON.stringify(record.name)} runs into the central directory`, { details: { name: record.name } });
    }
    let dataDescriptorSize = 0;
    if ((local.flags & FLAG_DATA_DESCRIPTOR) !== 0) {
      const localZip64 = parseExtraFields(localExtra).fields.some((f) => f.id === EXTRA_ZIP64);
      dataDescriptorSize = dataDescriptorLength(await read(dataEnd, 24), record, local, localZip64, leniency);
      if (dataEnd + dataDescriptorSize > cdOffset) {
        throw new SigningError('zip_overlapping_entries', `data descriptor of ${JSON.stringify(record.name)} runs into the central directory`, { details: { name: record.name } });
      }
    }
    const kind = entryKind(record.name, record.versionMadeBy, record.externalAttributes);
    const entry: ZipEntry = {
      index: record.index,
      name: record.name,
      nameBytes: record.nameBytes,
      versionMadeBy: record.versionMadeBy,
      versionNeeded: record.versionNeeded,
      flags: record.flags,
      method: record.method,
      dosTime: record.dosTime,
      dosDate: record.dosDate,
      crc32: record.crc32,
      compressedSize: record.compressedSize,
      uncompressedSize: record.uncompressedSize,
      localHeaderOffset: offset,
      dataOffset,
      dataDescriptorSize,
      endOffset: dataEnd + dataDescriptorSize,
      internalAttributes: record.internalAttributes,
      externalAttributes: record.externalAttributes,
      unixMode: kind.unixMode,
      isDirectory: kind.isDirectory,
      isSymlink: kind.isSymlink,
      zip64: record.zip64,
      centralExtra: record.extra,
      centralExtraFields: record.extraFields,
      comment: record.comment,
      centralRecord: record.record,
      localHeader,
      localExtra,
      discarded: leniency !== null,
      tolerated: leniency?.tolerated ?? NO_ERRORS,
      unreadable: leniency?.unreadable ?? null,
    };
    entries[record.index] = entry;
    previous = entry;
  }
  return entries;
}

// Header windows read ahead of the one in use.
const WINDOWS_AHEAD = 16;
// An entry that is not discarded tolerates nothing: one shared empty list rather than one each.
const NO_ERRORS: readonly SigningError[] = Object.freeze([]);

/** windowedReader's reads: awaited, or at once when the bytes have arrived already. */
interface WindowedReader {
  (pos: number, length: number): Promise<Buffer>;
  /**
   * The bytes, if the planned window that holds them has been read: most headers are found so,
   * and an await per read (two per entry) cost more than the reading.
   */
  arrived(pos: number, length: number): Buffer | undefined;
}

/**
 * [start, end) ranges, in file order, each covering as many expected headers (and data
 * descriptors) as fit in HEADER_BATCH with at most HEADER_GAP bytes between them. Positions are estimates from the central directory; a
 * local header with a longer extra field than its central one is read on its own.
 */
function planWindows(order: readonly CentralRecord[], cdOffset: number): [number, number][] {
  const items: [number, number][] = [];
  for (const r of order) {
    const headerEnd = r.localHeaderOffset + LOCAL_HEADER_SIZE + r.nameBytes.length + r.extra.length;
    items.push([r.localHeaderOffset, headerEnd + EXTRA_SLACK]);
    if ((r.flags & FLAG_DATA_DESCRIPTOR) !== 0) items.push([headerEnd + r.compressedSize, headerEnd + r.compressedSize + 24 + EXTRA_SLACK]);
  }
  items.sort((a, b) => a[0] - b[0]);
  const windows: [number, number][] = [];
  for (const [start, end] of items) {
    const last = windows.at(-1);
    if (last !== undefined && end - last[0] <= HEADER_BATCH && start >= last[0] && start - last[1] <= HEADER_GAP) last[1] = Math.max(last[1], Math.min(cdOffset, end));
    else if (start < cdOffset) windows.push([start, Math.min(cdOffset, end)]);
  }
  return windows;
}

/**
 * Reads at increasing positions, served from the planned windows (prefetched WINDOWS_AHEAD at a
 * time) or, when a header is longer than planned, by a read of its own. Never past `limit`.
 */
function windowedReader(source: DataSource, windows: readonly [number, number][], limit: number): WindowedReader {
  const reads = new Map<number, Promise<Buffer>>();
  const arrived = new Map<number, Buffer>();
  let current = 0;
  let launched = 0;
  const launch = (): void => {
    while (launched < windows.length && launched < current + WINDOWS_AHEAD) {
      const [start, end] = windows[launched]!;
      const index = launched;
      const read = source.read(start, end - start);
      // A rejection surfaces when the window is awaited; until then it is not "unhandled".
      read.then((bytes) => index >= current && arrived.set(index, bytes), () => {});
      reads.set(index, read);
      launched += 1;
    }
  };
  /** The planned window holding [pos, end), moving past those that end before `pos`. */
  const windowFor = (pos: number, end: number): [number, number] | undefined => {
    while (current < windows.length && windows[current]![1] <= pos) {
      reads.delete(current);
      arrived.delete(current++);
    }
    launch();
    const window = windows[current];
    return window === undefined || pos < window[0] || end > window[1] ? undefined : window;
  };
  const read = async (pos: number, length: number): Promise<Buffer> => {
    const end = Math.min(pos + length, limit);
    const window = windowFor(pos, end);
    if (window === undefined) return await source.read(pos, end - pos);
    return (await reads.get(current)!).subarray(pos - window[0], end - window[0]);
  };
  return Object.assign(read, {
    arrived(pos: number, length: number): Buffer | undefined {
      const end = Math.min(pos + length, limit);
      const window = windowFor(pos, end);
      return window === undefined ? undefined : arrived.get(current)?.subarray(pos - window[0], end - window[0]);
    },
  });
}
