// What CodeResources seals: one record per file of a bundle, relative to the bundle root.

/** A file as the sealer sees it: its final bytes' digests, or a symlink's target. */
export type BundleFile =
  | { readonly kind: 'file'; readonly path: string; readonly sha1: Buffer; readonly sha256: Buffer }
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string };

/** One `files2` entry as written or read. */
export type SealEntry =
  | { readonly kind: 'file'; readonly sha1?: Buffer; readonly sha256?: Buffer; readonly optional: boolean }
  | { readonly kind: 'symlink'; readonly target: string; readonly optional: boolean }
  /** Nested code (`{cdhash, requirement}`), written by macOS-style rules; iOS rules never produce it. */
  | { readonly kind: 'nested'; readonly cdhash: Buffer; readonly requirement: string; readonly optional: boolean };

export interface CodeResourcesSeal {
  /** `files` (V1): SHA-1 of regular files. */
  readonly files: ReadonlyMap<string, { sha1: Buffer; optional: boolean }>;
  /** `files2` (V2): what iOS 9+ verifies. */
  readonly files2: ReadonlyMap<string, SealEntry>;
}
