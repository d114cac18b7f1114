// The CRC-32 of a chunk of entry content the zip reader has just checked, remembered so that a
// writer passing the same chunk through to an output entry combines it (crc32-combine.ts) rather
// than reading the bytes again. Keyed by the chunk object: a view of other bytes, or of part of it,
// is not the same chunk. Nothing here is trusted further than the writer's own CRC would be:
// verification reads the output back and checks its CRC-32 from the bytes.
import { crc32 } from 'node:zlib';
import { crc32Combine } from './crc32-combine.ts';

const known = new WeakMap<Uint8Array, number>();
/** Smaller chunks are not remembered: combining costs ~2 µs, and small entries are not passed through. */
const NOTED_FROM = 256 * 1024;

/** `running` (the CRC-32 of the bytes before `chunk`) extended by `chunk`, whose own CRC-32 is remembered when it is large. */
export function crc32Noted(chunk: Uint8Array, running: number): number {
  if (chunk.length < NOTED_FROM) return crc32(chunk, running);
  const own = crc32(chunk);
  known.set(chunk, own >>> 0);
  return crc32Combine(running, own, chunk.length);
}

/** The CRC-32 recorded for this very chunk, if any. */
export function knownChunkCrc(chunk: Uint8Array): number | undefined {
  return known.get(chunk);
}
