// Resource bounds the reader enforces, so that a hostile archive fails with zip_bomb instead of
// exhausting memory, disk or CPU. Callers pass their configured values; these are the defaults.

export interface ZipLimits {
  /** Most entries a central directory may list (each costs a few hundred bytes of memory). */
  maxEntries: number;
  /** Largest central directory, in bytes. */
  maxCentralDirectorySize: number;
  /** Largest uncompressed size of one entry. */
  maxEntryUncompressedSize: number;
  /** Largest sum of uncompressed sizes over the archive. */
  maxTotalUncompressedSize: number;
  /** Largest uncompressed/compressed ratio of one entry ... */
  maxCompressionRatio: number;
  /** ... once the entry is bigger than this (small, very compressible files are harmless). */
  compressionRatioThreshold: number;
}

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxEntries: 500_000,
  maxCentralDirectorySize: 256 * 1024 * 1024,
  maxEntryUncompressedSize: 8 * 1024 * 1024 * 1024,
  maxTotalUncompressedSize: 32 * 1024 * 1024 * 1024,
  // Deflate tops out near 1032:1; real app content stays far below 200:1 beyond 1 MiB.
  maxCompressionRatio: 200,
  compressionRatioThreshold: 1024 * 1024,
});

export function resolveLimits(limits: Partial<ZipLimits> | undefined): ZipLimits {
  return { ...DEFAULT_ZIP_LIMITS, ...limits };
}
