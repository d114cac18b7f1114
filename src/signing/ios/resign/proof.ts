// What the re-signer hands to verifyWritten (../verify-ipa/verify-written.ts) so the output can be
// proved without a second content pass over what it copied: for every entry copied unchanged,
// where its compressed bytes lie in the input and the content digests the signing pass took of
// them; and the names of the entries it wrote itself, which the verifier checks in full (from
// what the re-signer's thread read back of them, where it did).
import type { WrittenCode } from './read-back.ts';
import type { FileRecord } from './scan.ts';

export interface CopiedEntry {
  /** Offset of the entry's compressed bytes in the input. */
  readonly inputDataOffset: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly crc32: number;
  readonly method: number;
  /** SHA-1 + SHA-256 of its content (or its symlink target) from the pass; none outside the app. */
  readonly record: FileRecord | undefined;
  /** A Mach-O file the pass found not signable (MH_OBJECT, MH_DSYM…): sealed as a resource. */
  readonly unsignedMachO: boolean;
}

export interface ResignProof {
  readonly inputSize: number;
  readonly copied: ReadonlyMap<string, CopiedEntry>;
  /** Entries the re-signer wrote (signed code, Info.plist, profiles, CodeResources). */
  readonly written: ReadonlySet<string>;
  /** Signed Mach-O files the scan thread read back from the output (read-back.ts), by name; the verifier checks the rest itself. */
  readonly readBack: ReadonlyMap<string, Promise<WrittenCode | undefined>>;
}
