// Locating and splitting the APK Signing Block (apksig ApkSigningBlockUtils.findApkSigningBlock
// and findApkSignatureSchemeBlock). Layout before the central directory:
//   u64 size (block length - 8) | pairs: u64 len, u32 id, value[len - 4] | u64 size | "APK Sig Block 42"
import type { DataSource } from '../../data-source.ts';
import { BLOCK_MAGIC, BLOCK_MIN_SIZE } from './constants.ts';

export interface SigningBlockPair {
  readonly id: number;
  readonly value: Buffer;
}

export interface SigningBlock {
  /** File offset of the block's first byte (the entries section ends here). */
  readonly offset: number;
  /** Whole block, both size fields and the magic included. */
  readonly bytes: Buffer;
  /** Pairs in file order, up to the first malformed one. */
  readonly pairs: readonly SigningBlockPair[];
  /** Why the pair list stops early, when it does (apksig then finds no later pair). */
  readonly malformed: string | null;
}

export type SigningBlockLookup = { found: true; block: SigningBlock } | { found: false; reason: string };

/** Finds the block that ends where the central directory starts, or says why there is none. */
export async function findSigningBlock(source: DataSource, centralDirectoryOffset: number): Promise<SigningBlockLookup> {
  if (centralDirectoryOffset < BLOCK_MIN_SIZE) {
    return { found: false, reason: `APK too small for an APK Signing Block (central directory at ${centralDirectoryOffset})` };
  }
  const footer = await source.read(centralDirectoryOffset - 24, 24);
  if (!footer.subarray(8).equals(BLOCK_MAGIC)) return { found: false, reason: 'no APK Signing Block before the central directory' };
  const sizeInFooter = footer.readBigUInt64LE(0);
  // apksig: the size must cover at least the footer and stay below Integer.MAX_VALUE - 8.
  if (sizeInFooter < 24n || sizeInFooter > BigInt(0x7fffffff - 8)) {
    return { found: false, reason: `APK Signing Block size out of range: ${sizeInFooter}` };
  }
  const total = Number(sizeInFooter) + 8;
  const offset = centralDirectoryOffset - total;
  if (offset < 0) return { found: false, reason: `APK Signing Block offset out of range: ${offset}` };
  const bytes = await source.read(offset, total);
  const sizeInHeader = bytes.readBigUInt64LE(0);
  if (sizeInHeader !== sizeInFooter) {
    return { found: false, reason: `APK Signing Block sizes in header and footer do not match: ${sizeInHeader} vs ${sizeInFooter}` };
  }
  return { found: true, block: { offset, bytes, ...parsePairs(bytes.subarray(8, total - 24)) } };
}

/** apksig findApkSignatureSchemeBlock's walk: u64 length (4..2^31-1, within the block), u32 id, value. */
export function parsePairs(region: Buffer): { pairs: SigningBlockPair[]; malformed: string | null } {
  const pairs: SigningBlockPair[] = [];
  let position = 0;
  while (position < region.length) {
    const index = pairs.length + 1;
    if (region.length - position < 8) return { pairs, malformed: `insufficient data to read the size of APK Signing Block entry #${index}` };
    const length = region.readBigUInt64LE(position);
    position += 8;
    if (length < 4n || length > 0x7fffffffn) return { pairs, malformed: `APK Signing Block entry #${index} size out of range: ${length}` };
    if (Number(length) > region.length - position) {
      return { pairs, malformed: `APK Signing Block entry #${index} size out of range: ${length}, available: ${region.length - position}` };
    }
    const id = region.readUInt32LE(position);
    pairs.push({ id, value: region.subarray(position + 4, position + Number(length)) });
    position += Number(length);
  }
  return { pairs, malformed: null };
}

/** apksig returns the first pair with the ID. */
export function findPair(block: SigningBlock, id: number): Buffer | null {
  return block.pairs.find((pair) => pair.id === id)?.value ?? null;
}
