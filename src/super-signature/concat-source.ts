// A DataSource over several sources end to end: an incremental build is its shared file followed
// by its per-device part (src/signing/ios/resign-incremental), verified and read as one .ipa.
import type { DataSource } from '../signing/data-source.ts';

export class ConcatSource implements DataSource {
  readonly size: number;
  readonly #parts: readonly DataSource[];

  constructor(parts: readonly DataSource[]) {
    this.#parts = parts;
    this.size = parts.reduce((n, p) => n + p.size, 0);
  }

  async read(offset: number, length: number): Promise<Buffer> {
    if (offset < 0 || length < 0 || offset + length > this.size) throw new RangeError(`read of ${length} bytes at ${offset} runs past ${this.size}`);
    const chunks: Buffer[] = [];
    let start = 0;
    for (const part of this.#parts) {
      const end = start + part.size;
      const from = Math.max(offset, start);
      const to = Math.min(offset + length, end);
      if (from < to) chunks.push(await part.read(from - start, to - from));
      start = end;
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  async close(): Promise<void> {
    await Promise.all(this.#parts.map((p) => p.close()));
  }
}
