// The signer's view of its output: a sequential DataSink. The engine never seeks or reads the
// output back - it hashes bytes for the v2/v3 content digest as it writes them. Writes are queued
// (up to a bound) so that the sink's I/O overlaps the reading and hashing of the next entries.
import type { DataSink } from '../../data-sink.ts';
import { SigningError } from '../../errors.ts';
import type { ChunkedDigester } from '../content-digest.ts';

// Bytes handed to the sink but not yet written before write() waits.
const QUEUE_LIMIT = 1024 * 1024;

export class OutputWriter {
  private readonly sink: DataSink;
  private digester: ChunkedDigester | null;
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;
  private failure: unknown = null;
  offset = 0;

  constructor(sink: DataSink, digester: ChunkedDigester | null) {
    // Offsets written into headers are file offsets, so the APK must start the sink.
    if (sink.position !== 0) throw new SigningError('apk_invalid', 'the output sink must be empty');
    this.sink = sink;
    this.digester = digester;
  }

  /** Appends bytes, which must not be modified afterwards. */
  async write(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return;
    if (this.failure !== null) throw this.failure;
    this.offset += chunk.length;
    this.digester?.update(chunk);
    this.queued += chunk.length;
    this.queue = this.queue.then(async () => {
      try {
        if (this.failure === null) await this.sink.write(chunk);
      } catch (error) {
        this.failure ??= error;
      } finally {
        this.queued -= chunk.length;
      }
    });
    if (this.queued > QUEUE_LIMIT) await this.drain();
    await this.digester?.ready();
  }

  /** Stops feeding the digester (for bytes outside the digested sections). */
  detachDigester(): void {
    this.digester = null;
  }

  /** Waits until everything queued reached the sink; rethrows a sink failure. */
  async drain(): Promise<void> {
    await this.queue;
    if (this.failure !== null) throw this.failure;
  }
}
