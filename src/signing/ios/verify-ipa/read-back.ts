// Reading the re-signer's large Mach-O files back from the output on the helper thread
// (../helper), for the verifier (verify-written.ts). Each is streamed (stream-code.ts: inflated,
// CRC-32 and size checked, every page hashed) as soon as its entry is written, while the main
// thread goes on writing the archive and then verifies everything else; verifyScanned takes the
// result instead of streaming the file itself.
//
// Why reading early proves the same as reading at the end (SPECIFICATION.md, "Verifying what was
// written"): a read starts only once the entry's write has finished - its data and the header
// patched in place (zip/new-entry.ts) - and the sink is flushed, so the bytes read are in the
// file. Nothing writes into an entry after that: the writer only appends, and patches only the
// entry it is writing. And a result is used only for an output entry at the same offset with
// the same method, sizes and CRC-32 as the bytes that were read, which the verifier takes from
// the output's own central directory and local header.
import { DEFAULT_ZIP_LIMITS, type WrittenEntry, type ZipEntry } from '../../zip/index.ts';
import type { HelperThread } from '../helper/helper-thread.ts';
import type { StreamedCode } from './stream-code.ts';

/** Smaller files are not worth a trip to the thread: the verifier reads them whole. */
const READ_BACK_FROM = 1024 * 1024;

interface Read {
  readonly at: Pick<WrittenEntry, 'dataOffset' | 'method' | 'compressedSize' | 'uncompressedSize' | 'crc32'>;
  readonly wholeFile: boolean;
  readonly result: Promise<StreamedCode | undefined>;
}

export class ReadBack {
  readonly #helper: HelperThread;
  readonly #path: string;
  readonly #flush: () => Promise<void>;
  readonly #from: number;
  readonly #reads = new Map<string, Read>();

  /** `path`: the output file; `flush`: writes out what its sink still buffers; `from`: the smallest file read back (default 1 MiB). */
  constructor(helper: HelperThread, path: string, flush: () => Promise<void>, options: { from?: number } = {}) {
    this.#helper = helper;
    this.#path = path;
    this.#flush = flush;
    this.#from = options.from ?? READ_BACK_FROM;
  }

  /** ResignOptions.codeWritten: reads a large file back now, if the helper thread is running. */
  written = async (entry: WrittenEntry, sealed: boolean): Promise<void> => {
    // Starting the thread only for this would cost more than it saves on a small app.
    if (entry.uncompressedSize < this.#from || !this.#helper.started) return;
    await this.#flush();
    // The limits the verifier opens the output with (openIpa: the defaults).
    const result = this.#helper.streamCode(this.#path, DEFAULT_ZIP_LIMITS, { ...entry, unreadable: null }, sealed);
    result.catch(() => {}); // reported when the verifier asks for it
    this.#reads.set(entry.name, { at: entry, wholeFile: sealed, result });
  };

  /** VerifyIpaOptions.streamCode: the early read of `entry` when it read these very bytes; else undefined. */
  streamCode = (entry: ZipEntry, wholeFile: boolean): Promise<StreamedCode | undefined> | undefined => {
    const read = this.#reads.get(entry.name);
    if (read === undefined || (wholeFile && !read.wholeFile)) return undefined;
    const { at } = read;
    const same = at.dataOffset === entry.dataOffset && at.method === entry.method && at.compressedSize === entry.compressedSize && at.uncompressedSize === entry.uncompressedSize && at.crc32 === entry.crc32;
    return same ? read.result : undefined;
  };
}
