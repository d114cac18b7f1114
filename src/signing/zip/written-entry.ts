// The record ZipWriter keeps of each entry it wrote (new-entry.ts builds it for new entries, the
// writer for copied ones; kept apart so neither imports the other).
/** What the writer recorded about an entry it wrote. */
export interface WrittenEntry {
  readonly name: string;
  readonly localHeaderOffset: number;
  readonly dataOffset: number;
  readonly method: number;
  readonly crc32: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  /** The central directory record that finish writes for it. */
  readonly centralRecord: Buffer;
}
