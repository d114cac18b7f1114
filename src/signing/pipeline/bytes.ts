// Structured cloning (the thread pool) turns Buffers into plain Uint8Arrays; engines want Buffers.
import type { Bytes } from './types.ts';

/** A Buffer view of the same memory (no copy). */
export function toBuffer(bytes: Bytes): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
