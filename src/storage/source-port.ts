// A DataSource carried across a worker-thread boundary: the thread reads through a MessagePort,
// the owning thread answers each read from its own source (a file, or S3 range GETs). CPU-heavy
// readers (release facts: asset-catalog icon decoding) then run off the event loop while the
// bytes are still read where they are stored, with no local copy. Hand-written: piscina moves
// messages, not random-access sources.
import type { MessagePort } from 'node:worker_threads';
import type { DataSource } from '../signing/data-source.ts';

interface ReadRequest {
  id: number;
  offset: number;
  length: number;
}
type ReadAnswer = { id: number; bytes: Uint8Array } | { id: number; error: string };

/** Answers reads arriving on `port` from `source` until the port is closed. */
export function serveSource(source: DataSource, port: MessagePort): void {
  port.on('message', (request: ReadRequest) => {
    source.read(request.offset, request.length).then(
      (bytes) => {
        // A copy the port can transfer (the source may hand out views of a shared cache block).
        const copy = new Uint8Array(bytes);
        port.postMessage({ id: request.id, bytes: copy } satisfies ReadAnswer, [copy.buffer]);
      },
      (error: unknown) => port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies ReadAnswer),
    );
  });
}

/** The thread side: a DataSource of `size` bytes whose reads go through `port`. */
export class PortSource implements DataSource {
  readonly size: number;
  readonly #port: MessagePort;
  readonly #pending = new Map<number, { resolve: (bytes: Buffer) => void; reject: (error: Error) => void }>();
  #next = 0;

  constructor(size: number, port: MessagePort) {
    this.size = size;
    this.#port = port;
    port.on('message', (answer: ReadAnswer) => {
      const waiting = this.#pending.get(answer.id);
      if (!waiting) return;
      this.#pending.delete(answer.id);
      if ('error' in answer) waiting.reject(new Error(answer.error));
      else waiting.resolve(Buffer.from(answer.bytes.buffer, answer.bytes.byteOffset, answer.bytes.byteLength));
    });
  }

  read(offset: number, length: number): Promise<Buffer> {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > this.size) {
      return Promise.reject(new RangeError(`read of ${length} bytes at ${offset} is outside a source of ${this.size} bytes`));
    }
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#port.postMessage({ id, offset, length } satisfies ReadRequest);
    });
  }

  async close(): Promise<void> {
    for (const waiting of this.#pending.values()) waiting.reject(new Error('source closed'));
    this.#pending.clear();
    this.#port.close();
  }
}
