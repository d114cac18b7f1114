// Where signPackage writes: a DataSink that can be read back once closed, so the output is
// verified from the bytes that were actually written (never from what the signer meant to write).
import { FileSink, MemorySink, type DataSink } from '../data-sink.ts';
import { BufferSource, FileSource, type DataSource } from '../data-source.ts';

export interface VerifiableSink extends DataSink {
  /** The bytes written, for reading back after close(); the caller closes the source. */
  reopen(): Promise<DataSource>;
  /**
   * The bytes written so far, readable while writing goes on (and after close): the verifier
   * reads each signed file back as soon as it is written. Its size is what has been written.
   */
  readBack(): DataSource;
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

  write(data: Buffer): Promise<void> {
    return this.#sink.write(data);
  }

  close(): Promise<void> {
    return this.#sink.close();
  }

  reopen(): Promise<DataSource> {
    return FileSource.open(this.path);
  }

  readBack(): DataSource {
    const sink = this.#sink;
    const path = this.path;
    // Once the sink is closed, the file itself holds everything written.
    let file: Promise<FileSource> | undefined;
    const closedFile = (): Promise<FileSource> => (file ??= FileSource.open(path));
    return {
      get size() {
        return sink.position;
      },
      read: async (offset, length) => (sink.isClosed ? (await closedFile()).read(offset, length) : sink.readWritten(offset, length)),
      close: async () => {
        if (file !== undefined) await (await file).close();
      },
    };
  }
}

/** An in-memory output (tests, small packages). */
export class MemoryOutput extends MemorySink implements VerifiableSink {
  async reopen(): Promise<DataSource> {
    return new BufferSource(this.toBuffer());
  }

  readBack(): DataSource {
    const output = this;
    return {
      get size() {
        return output.position;
      },
      read: async (offset, length) => new BufferSource(output.toBuffer()).read(offset, length),
      close: async () => {},
    };
  }
}
