// Reading signed code back from the output while the re-signer still writes (SPECIFICATION.md,
// "Verifying what was written"). The verification that follows the re-sign reads every Mach-O
// file it wrote back from the output bytes: the page hashes of its code, the digests its parent's
// seal needs, its header and signature (stream-code.ts). The scan thread has hashed the
// resources by the time the frameworks are written and sits idle while this thread signs the
// rest, so each signed file is handed to it as soon as its bytes are in the output file; the
// verifier then checks what it read instead of streaming those files itself.
//
// The verifier proves the read-back is of its output: it uses one only for an output entry at
// the same offset with the same method, CRC-32 and sizes, whose bytes the thread inflated and
// checked against that CRC-32 (zip/entry-content.ts) — the writer never rewrites an entry's data
// once written, only headers before it. Anything else (a file not read back, a fat file the
// stream does not take, a thread that failed or was stopped) it reads itself, as before.
import { locationOf, type EntryLocation } from '../../zip/entry-content.ts';
import type { WrittenEntry } from '../../zip/index.ts';
import type { CodeReadBack } from './scan-thread.ts';
import type { StreamedCode } from './stream-code.ts';

/** A Mach-O file read back from the output, and where in the output it was read. */
export interface WrittenCode {
  readonly location: EntryLocation;
  readonly code: StreamedCode;
}

export class WrittenCodeReadBack {
  readonly #thread: CodeReadBack;
  readonly #flushed: () => number;
  readonly #results = new Map<string, Promise<WrittenCode | undefined>>();
  // Offered but not yet in the file: the sink still buffers their last bytes.
  readonly #waiting: Array<{ location: EntryLocation; wholeFile: boolean }> = [];

  /** `flushed`: how many of the output's bytes are in the file (DataSink.file). */
  constructor(thread: CodeReadBack, flushed: () => number) {
    this.#thread = thread;
    this.#flushed = flushed;
  }

  /** `entry` was just written; `wholeFile`: a bundle seals it, so its digests are needed too. It goes to the thread at the next dispatch. */
  offer(entry: WrittenEntry, wholeFile: boolean): void {
    this.#waiting.push({ location: locationOf(entry), wholeFile });
  }

  /** Hands the thread every offered file whose bytes are all in the file by now (in the order written). */
  dispatch(): void {
    const flushed = this.#flushed();
    while (this.#waiting.length > 0 && this.#waiting[0]!.location.dataOffset + this.#waiting[0]!.location.compressedSize <= flushed) {
      const { location, wholeFile } = this.#waiting.shift()!;
      this.#results.set(location.name, this.#thread.request(location, wholeFile).then((code) => (code === undefined ? undefined : { location, code })));
    }
  }

  /** No more files: what was read back (or is being), by entry name. Files still buffered are left to the verifier. */
  finish(): ReadonlyMap<string, Promise<WrittenCode | undefined>> {
    this.dispatch();
    this.#waiting.length = 0;
    this.#thread.close();
    return this.#results;
  }
}
