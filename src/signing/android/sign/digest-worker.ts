// Worker-thread entry of the signer's v1 digest thread (digest-thread.ts): takes the pieces of
// each entry, in order, from the blocks the main thread shares with it, and digests them with the
// in-process code (EntryContentHasher: inflation, size and CRC-32 checks). A block is given back
// once every piece in it has been taken in: the hasher has hashed it or copied it. At the end the
// digests go back in one message, in entry order; the first failure is posted instead. Then it
// may be asked to read the start of the output file back and take its v2/v3 chunk digests.
import { readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { SigningError, type SigningErrorCode } from '../../errors.ts';
import { collectBetweenPhases } from '../../reclaim.ts';
import { CHUNK_SIZE, chunkDigest, type ChunkedAlgorithm } from '../content-digest.ts';
import { PendingDigests, type EntryContentHasher, type HashedEntry } from './entry-digest.ts';

/** A piece of an entry: [entry index, block, offset, length]; block -1 marks the entry's end. */
export type PieceOp = [entry: number, block: number, offset: number, length: number];

/** What the main thread posts. */
export type DigestWorkMessage =
  | { kind: 'entries'; entries: HashedEntry[]; algorithm: string }
  | { kind: 'ops'; blocks: [number, SharedArrayBuffer][]; ops: PieceOp[]; block: number }
  | { kind: 'end' }
  | { kind: 'readBack'; fd: number; end: number; algorithms: ChunkedAlgorithm[] };

/** What the thread posts. */
export type DigestMessage =
  | { kind: 'returned'; block: number }
  | { kind: 'digests'; digests: Uint8Array; size: number }
  | { kind: 'readBack'; chunks: [ChunkedAlgorithm, Uint8Array[]][] }
  | { kind: 'failed'; code: SigningErrorCode | undefined; message: string; details: Record<string, unknown> | undefined };

const port = parentPort!;
const post = (message: DigestMessage): void => port.postMessage(message);
const blocks = new Map<number, Buffer>();
const pending = new PendingDigests<number>();
const hashers = new Map<number, EntryContentHasher>();
let entries: HashedEntry[] = [];
let algorithm = '';
let failed = false;

async function handle(message: DigestWorkMessage): Promise<void> {
  if (message.kind === 'entries') {
    entries = message.entries;
    algorithm = message.algorithm;
  } else if (message.kind === 'ops') {
    for (const [id, memory] of message.blocks) blocks.set(id, Buffer.from(memory));
    for (const [index, block, offset, length] of message.ops) {
      const hasher = hashers.get(index) ?? pending.hasher(entries[index]!, [algorithm], { checkCrc: true });
      if (block === -1) {
        hashers.delete(index);
        await pending.add(index, hasher);
        continue;
      }
      hashers.set(index, hasher);
      await hasher.update(blocks.get(block)!.subarray(offset, offset + length));
    }
    if (message.block !== -1) post({ kind: 'returned', block: message.block });
  } else if (message.kind === 'readBack') {
    post({ kind: 'readBack', chunks: readBack(message.fd, message.end, message.algorithms) });
  } else {
    // The main thread's read blocks are not lent any more.
    blocks.clear();
    const digests = await pending.all();
    if (digests.size !== entries.length) throw new Error(`internal: ${digests.size} of ${entries.length} entries were digested`);
    const size = digests.get(0)?.[0]?.length ?? 0;
    const out = new Uint8Array(size * entries.length);
    for (const [index, [digest]] of digests) out.set(digest!, index * size);
    post({ kind: 'digests', digests: out, size });
    // The shared blocks' memory goes only once no thread refers to them (reclaim.ts).
    collectBetweenPhases();
  }
}

/**
 * The chunk digests of the file's first `end` bytes (whole chunks), read through `fd`, which the
 * main thread opened and closes (a thread that is stopped runs no cleanup of its own).
 */
function readBack(fd: number, end: number, algorithms: readonly ChunkedAlgorithm[]): [ChunkedAlgorithm, Uint8Array[]][] {
  const chunks = algorithms.map((algorithm): [ChunkedAlgorithm, Uint8Array[]] => [algorithm, []]);
  const buffer = Buffer.allocUnsafe(CHUNK_SIZE);
  for (let offset = 0; offset < end; offset += CHUNK_SIZE) {
    let filled = 0;
    while (filled < CHUNK_SIZE) {
      const read = readSync(fd, buffer, filled, CHUNK_SIZE - filled, offset + filled);
      if (read === 0) throw new Error(`the output ends before ${end} bytes, which were written`);
      filled += read;
    }
    for (const [algorithm, digests] of chunks) digests.push(chunkDigest(algorithm, buffer));
  }
  return chunks;
}

// Messages are handled one after the other: a piece may wait for a large entry's inflation.
let queue = Promise.resolve();
port.on('message', (message: DigestWorkMessage) => {
  queue = queue.then(async () => {
    if (failed) return;
    try {
      await handle(message);
    } catch (error) {
      failed = true;
      const signing = error instanceof SigningError ? error : undefined;
      post({ kind: 'failed', code: signing?.code, message: (error as Error).message, details: signing?.details });
    }
  });
});
