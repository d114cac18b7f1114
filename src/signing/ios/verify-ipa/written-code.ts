// Reading signed code back while the rest of the app is still being signed. The re-signer reports
// each Mach-O file once it is written (ResignOptions.onCodeWritten); from then on its bytes in the
// output never change (the writer only appends, and patches local headers, never entry data).
// So the verifier's costly part for that file — inflating it from the output bytes, hashing its
// pages and, when a parent seals it, the whole file (stream-code.ts) — can run at once, on what
// the machine has spare while later files are signed, instead of after the archive is finished.
//
// verifyWritten then uses a result only for the entry the finished archive actually holds: same
// data offset, method, sizes and CRC-32 as the file that was read back (the zip reader has
// checked the local header against the central directory), and compressed bytes that are still
// the ones read back — their CRC-32, taken as they were read, is taken again from the finished
// file (a cheap pass over bytes in the page cache), so a later write over them would show.
// Everything else of the file — its header, signature, CMS, special slots — is checked from the
// stand-in the stream kept, as for any streamed file. A file whose result does not apply is read
// again from the archive.
import { crc32 } from 'node:zlib';
import type { DataSource } from '../../data-source.ts';
import { DEFAULT_ZIP_LIMITS, type WrittenEntry, type ZipEntry } from '../../zip/index.ts';
import { streamCode, type StreamedCode } from './stream-code.ts';

interface Pending {
  entry: WrittenEntry;
  wholeFile: boolean;
  result: Promise<StreamedCode | undefined>;
  /** CRC-32 of the compressed bytes as they were read back. */
  rawCrc: () => number;
}

const COMPARE_STEP = 1024 * 1024;

export class WrittenCodeChecks {
  private readonly output: DataSource;
  private readonly pending = new Map<string, Pending>();
  // One file at a time: the checks fill spare capacity; in parallel they would compete with the
  // signing for the same two cores and hold more stand-ins at once.
  private queue: Promise<unknown> = Promise.resolve();

  /** `output`: the bytes written so far (VerifiableSink.readBack). */
  constructor(output: DataSource) {
    this.output = output;
  }

  /** Starts reading back a signed file; `wholeFile`: whether a parent bundle seals it (its digests are needed). */
  add(entry: WrittenEntry, wholeFile: boolean): void {
    const raw = crcOfReads(this.output, entry.dataOffset);
    const result = this.queue.then(() => streamCode(raw.source, { ...entry, unreadable: null }, DEFAULT_ZIP_LIMITS, wholeFile));
    // Awaited by verifyScanned when the file's turn comes (its error is reported then).
    result.catch(() => {});
    this.queue = result.catch(() => undefined);
    this.pending.set(entry.name, { entry, wholeFile, result, rawCrc: () => raw.crc(entry.compressedSize) });
  }

  /**
   * The result for `entry` of the finished archive, when it was read back from exactly that
   * entry's data (and with the whole-file digests, if `wholeFile`); undefined otherwise.
   */
  lookup(entry: ZipEntry, wholeFile: boolean, archive: DataSource): Promise<StreamedCode | undefined> | undefined {
    const pending = this.applying(entry, wholeFile);
    return pending?.result.then(async (streamed) => {
      if (streamed === undefined) return undefined;
      let crc = 0;
      for (let at = 0; at < entry.compressedSize; at += COMPARE_STEP) crc = crc32(await archive.read(entry.dataOffset + at, Math.min(COMPARE_STEP, entry.compressedSize - at)), crc);
      // Changed since it was read back (or not read back whole): read it again from the archive.
      return crc >>> 0 === pending.rawCrc() ? streamed : undefined;
    });
  }

  /** Whether lookup has a result to give for `entry` (it may still turn out not to apply). */
  covers(entry: ZipEntry, wholeFile: boolean): boolean {
    return this.applying(entry, wholeFile) !== undefined;
  }

  private applying(entry: ZipEntry, wholeFile: boolean): Pending | undefined {
    const pending = this.pending.get(entry.name);
    if (pending === undefined || (wholeFile && !pending.wholeFile)) return undefined;
    const written = pending.entry;
    const same = written.dataOffset === entry.dataOffset && written.method === entry.method && written.compressedSize === entry.compressedSize && written.uncompressedSize === entry.uncompressedSize && written.crc32 === entry.crc32;
    return same ? pending : undefined;
  }

  /** Waits for every check started (failures included): nothing reads the output after this. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.pending.values()].map((p) => p.result));
    await this.output.close();
  }
}

/**
 * `output` seen through a source that takes the CRC-32 of the bytes read from `start` on, as long
 * as they are read in order without gaps (as an entry's data is read: stored or deflated, from
 * its first byte to its last). `crc(length)` is that CRC once exactly `length` bytes were read,
 * and NaN otherwise, which matches nothing.
 */
function crcOfReads(output: DataSource, start: number): { source: DataSource; crc: (length: number) => number } {
  let next = start;
  let crc = 0;
  let inOrder = true;
  const source: DataSource = {
    get size() {
      return output.size;
    },
    read: async (offset, length) => {
      const bytes = await output.read(offset, length);
      if (offset !== next) inOrder = false;
      crc = crc32(bytes, crc);
      next = offset + length;
      return bytes;
    },
    close: () => output.close(),
  };
  return { source, crc: (length) => (inOrder && next === start + length ? crc >>> 0 : Number.NaN) };
}
