// The signer's view of its output: a sequential DataSink. The engine never seeks or reads the
// output back - it hashes bytes for the v2/v3 content digest as it writes them. Bytes are
// copied into 1 MiB batch buffers, reused once the sink has written them (callers may reuse
// their pieces at once: see sequential-reader.ts), and up to a few batches are in flight, so the
// sink's I/O overlaps the reading and hashing of the next entries; a writer waits only for the
// oldest batch, never for the queue to empty. The digester is fed whole batches: a batch spans
// [k MiB, k+1 MiB) of the file, exactly a content-digest chunk, which is then hashed in place
// rather than copied once more (content-digest.ts).
import type { DataSink } from '../../data-sink.ts';
import { SigningError } from '../../errors.ts';
import type { ChunkedDigester } from '../content-digest.ts';

const BATCH_BYTES = 1024 * 1024;
// Batches handed to the sink and not yet written before write() waits. Two rather than four since
// the v1 digest thread (digest-thread.ts) takes ~12 MB while it runs: `signet sign` of bench:apk,
// 8 alternating pairs each against the same checkout, 1.010 s and 113.0 MiB peak with two,
// 1.005 s and 117.3 MiB with four.
const MAX_QUEUED = 2;

export class OutputWriter {
  private readonly sink: DataSink;
  private digester: ChunkedDigester | null;
  private readonly spare: Buffer[] = [];
  private batch: Buffer | null = null;
  private batchBytes = 0;
  // Bytes of the current batch already given to the digester.
  private digested = 0;
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;
  private waiters: (() => void)[] = [];
  private failure: unknown = null;
  offset = 0;

  constructor(sink: DataSink, digester: ChunkedDigester | null) {
    // Offsets written into headers are file offsets, so the APK must start the sink.
    if (sink.position !== 0) throw new SigningError('apk_invalid', 'the output sink must be empty');
    this.sink = sink;
    this.digester = digester;
  }

  /** Appends bytes (copied: the caller may reuse `chunk` once the promise settles). */
  async write(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return;
    if (this.failure !== null) throw this.failure;
    this.offset += chunk.length;
    let done = 0;
    while (done < chunk.length) {
      this.batch ??= this.spare.pop() ?? Buffer.allocUnsafe(BATCH_BYTES);
      const take = Math.min(BATCH_BYTES - this.batchBytes, chunk.length - done);
      chunk.copy(this.batch, this.batchBytes, done, done + take);
      this.batchBytes += take;
      done += take;
      if (this.batchBytes === BATCH_BYTES) {
        this.digestBatch();
        this.sendBatch();
      }
    }
    while (this.queued > MAX_QUEUED && this.failure === null) await new Promise<void>((resolve) => this.waiters.push(resolve));
    await this.digester?.ready();
  }

  /** Stops feeding the digester (for bytes outside the digested sections). */
  detachDigester(): void {
    this.digestBatch();
    this.digester = null;
  }

  /** Feeds the digester the current batch's bytes it has not seen yet. */
  private digestBatch(): void {
    if (this.digester !== null && this.batch !== null && this.batchBytes > this.digested) this.digester.update(this.batch.subarray(this.digested, this.batchBytes));
    this.digested = this.batchBytes;
  }

  /** Waits until everything written reached the sink; rethrows a sink failure. */
  async drain(): Promise<void> {
    this.digestBatch();
    this.sendBatch();
    await this.queue;
    if (this.failure !== null) throw this.failure;
  }

  private sendBatch(): void {
    const batch = this.batch;
    if (batch === null || this.batchBytes === 0) return;
    const bytes = batch.subarray(0, this.batchBytes);
    this.batch = null;
    this.batchBytes = 0;
    this.digested = 0;
    this.queued += 1;
    this.queue = this.queue.then(async () => {
      try {
        if (this.failure === null) await this.sink.write(bytes);
      } catch (error) {
        this.failure ??= error;
      } finally {
        this.queued -= 1;
        this.spare.push(batch);
        const waiters = this.waiters;
        this.waiters = [];
        for (const wake of waiters) wake();
      }
    });
  }
}
