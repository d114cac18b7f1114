// Where signPackage writes: a DataSink that can be read back once closed, so the output is
// verified from the bytes that were actually written (never from what the signer meant to write).
import { FileSink, MemorySink, type DataSink } from '../data-sink.ts';
import { BufferSource, FileSource, SIGNING_READS, type DataSource } from '../data-source.ts';

export interface VerifiableSink extends DataSink {
  /** The bytes written, for reading back after close(); the caller closes the source. */
  reopen(): Promise<DataSource>;
}

/** A file output. */
export class FileOutput implements VerifiableSink {
  readonly path: string;
  readonly #sink: FileSink;
  // Declared as a property (not a method) so that it exists exactly when the file sink has it:
  // the re-signer streams large Mach-O files only into sinks that can patch headers.
  readonly writeAt: (offset: number, data: Buffer) => Promise<void>;

  private constructor(path: string, sink: FileSink) {
    this.path = path;
    this.#sink = sink;
    this.writeAt = (offset, data) => sink.writeAt(offset, data);
  }

  static async create(path: string): Promise<FileOutput> {
    return new FileOutput(path, await FileSink.create(path));
  }

  get position(): number {
    return this.#sink.position;
  }

  get file(): { path: string; flushed: number } {
    return this.#sink.file;
  }

  write(data: Buffer): Promise<void> {
    return this.#sink.write(data);
  }

  close(): Promise<void> {
    return this.#sink.close();
  }

  reopen(): Promise<DataSource> {
    return FileSource.open(this.path, SIGNING_READS);
  }
}

/** An in-memory output (tests, small packages). */
export class MemoryOutput extends MemorySink implements VerifiableSink {
  async reopen(): Promise<DataSource> {
    return new BufferSource(this.toBuffer());
  }
}
