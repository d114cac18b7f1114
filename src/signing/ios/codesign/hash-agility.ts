// Which CodeDirectories to emit (Security MachORep::prepareForSigning / signer.cpp "default to
// SHA256 only"): SHA-256 only, unless some slice's minimum OS predates SHA-256 code signing or
// is unknown — then a SHA-1 primary directory plus a SHA-256 alternate (ios-signing.md §6.2).
import { minimumOS } from '../macho/inspect.ts';
import {
  PLATFORM_IOS, PLATFORM_IOSSIMULATOR, PLATFORM_MACOS, PLATFORM_TVOS, PLATFORM_TVOSSIMULATOR,
  PLATFORM_WATCHOS, PLATFORM_WATCHOSSIMULATOR,
} from '../macho/constants.ts';
import type { MachOSlice } from '../macho/types.ts';
import { HASH_SHA1, HASH_SHA256, type HashType } from './digest.ts';

/** First OS version (xxxx.yy.zz nibbles) whose kernel validates SHA-256-only signatures. */
const SHA256_SINCE: Record<number, number> = {
  [PLATFORM_MACOS]: 0x000a0b04, // 10.11.4
  [PLATFORM_IOS]: 0x000b0000, // 11.0
  [PLATFORM_IOSSIMULATOR]: 0x000b0000,
  [PLATFORM_TVOS]: 0x000b0000,
  [PLATFORM_TVOSSIMULATOR]: 0x000b0000,
  // ios-signing.md §6.2 (Security-61901 machorep.cpp): watchOS below 12.0 still gets SHA-1.
  [PLATFORM_WATCHOS]: 0x000c0000,
  [PLATFORM_WATCHOSSIMULATOR]: 0x000c0000,
};

export function sliceNeedsSha1(slice: MachOSlice): boolean {
  const min = minimumOS(slice);
  if (!min) return true; // no platform: Apple assumes an old target
  const since = SHA256_SINCE[min.platform];
  return since !== undefined && min.version < since;
}

/** Digest set for a whole file (all slices share it): primary first. */
export function digestSet(slices: readonly MachOSlice[]): HashType[] {
  return slices.some(sliceNeedsSha1) ? [HASH_SHA1, HASH_SHA256] : [HASH_SHA256];
}
