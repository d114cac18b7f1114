// Writing the APK Signing Block (apksig ApkSigningBlockUtils.generateApkSigningBlock): the pairs
// in the given order, then - as current apksig always does - a padding pair 0x42726577 of zero
// bytes so that the block length is a multiple of 4096 (needed by fs-verity; harmless otherwise).
import { u32, u64 } from '../bytes.ts';
import { BLOCK_ALIGNMENT, BLOCK_MAGIC, VERITY_PADDING_BLOCK_ID } from './constants.ts';
import type { SigningBlockPair } from './parse.ts';

export function buildSigningBlock(pairs: readonly SigningBlockPair[]): Buffer {
  let size = 8 + 8 + 16;
  for (const pair of pairs) size += 8 + 4 + pair.value.length;
  const parts: Buffer[] = [];
  for (const pair of pairs) parts.push(u64(4 + pair.value.length), u32(pair.id), pair.value);
  if (size % BLOCK_ALIGNMENT !== 0) {
    let padding = BLOCK_ALIGNMENT - (size % BLOCK_ALIGNMENT);
    // A pair is at least 12 bytes (u64 length + u32 id).
    if (padding < 12) padding += BLOCK_ALIGNMENT;
    parts.push(u64(padding - 8), u32(VERITY_PADDING_BLOCK_ID), Buffer.alloc(padding - 12));
    size += padding;
  }
  const sizeField = u64(size - 8);
  return Buffer.concat([sizeField, ...parts, sizeField, BLOCK_MAGIC]);
}

/** Zero bytes apksig inserts after the entries so that the block starts on a 4096 boundary. */
export function paddingBeforeBlock(entriesEnd: number): number {
  return (BLOCK_ALIGNMENT - (entriesEnd % BLOCK_ALIGNMENT)) % BLOCK_ALIGNMENT;
}
