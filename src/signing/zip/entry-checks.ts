// The reader's per-entry checks that need no I/O, and which of them an entry the caller will
// discard unread is excused from (ZipOpenOptions.discarded, SPECIFICATION.md §2.6).
//
// Two families: *content* checks (encryption, compression method, stored sizes, declared sizes
// against the limits) guard whoever reads or inflates the entry; *extraction* checks (safe
// names, duplicates after normalisation, local header agreeing about method and encryption, data
// descriptor contents) guard whoever extracts or copies it. A kept entry must pass both, at open.
// A discarded entry is neither extracted nor copied, so its failures are only recorded
// (`tolerated`); the first content failure is replayed by any read of it (`unreadable`).
import { SigningError } from '../errors.ts';
import type { CentralRecord } from './central-directory.ts';
import { FLAG_ENCRYPTED, FLAG_MASKED_HEADERS, FLAG_STRONG_ENCRYPTION, METHOD_DEFLATED, METHOD_STORED } from './format.ts';
import type { ZipLimits } from './limits.ts';
import { checkSafeName, duplicateKey } from './names.ts';

/** What a discarded entry failed. Kept entries have none: their failures throw. */
export interface Leniency {
  readonly tolerated: SigningError[];
  /** The first content check it failed: reading its data throws this. */
  unreadable: SigningError | null;
}

export type CheckFamily = 'content' | 'extraction';

/** Runs `check`: for a kept entry (`leniency` null) a failure throws, for a discarded one it is recorded. */
export function judge(leniency: Leniency | null, family: CheckFamily, check: () => void): void {
  if (leniency === null) {
    check();
    return;
  }
  try {
    check();
  } catch (error) {
    if (!(error instanceof SigningError)) throw error;
    leniency.tolerated.push(error);
    if (family === 'content' && leniency.unreadable === null) leniency.unreadable = error;
  }
}

/**
 * Features, names, duplicates and declared sizes of every record. Returns each record's
 * leniency (by CD index): null for kept entries, an empty or filled record for discarded ones.
 */
export function checkRecords(records: readonly CentralRecord[], limits: ZipLimits, discarded: ((name: string) => boolean) | undefined): (Leniency | null)[] {
  const leniencies = records.map((record): Leniency | null => (discarded?.(record.name) === true ? { tolerated: [], unreadable: null } : null));
  const exactNames = new Set<string>();
  // Normalised name -> the record holding it, a kept one in preference to a discarded one.
  const seen = new Map<string, CentralRecord>();
  let total = 0;
  for (const record of records) {
    const leniency = leniencies[record.index]!;
    // A kept entry (most of them) is checked directly, without a closure per check.
    if (leniency === null) {
      checkReadable(record);
      checkSafeName(record.name);
    } else {
      judge(leniency, 'content', () => checkReadable(record));
      judge(leniency, 'extraction', () => checkSafeName(record.name));
    }

    const quoted = (): string => JSON.stringify(record.name);
    // apksig ApkSigner.parseZipCentralDirectory refuses the same name twice whatever the entry
    // ("Multiple ZIP entries with the same name"), so exact duplicates are refused for all.
    if (exactNames.has(record.name)) {
      throw new SigningError('zip_duplicate_entry', `entries ${quoted()} and ${quoted()} name the same path`, { details: { name: record.name } });
    }
    exactNames.add(record.name);
    const key = duplicateKey(record.name);
    const previous = seen.get(key);
    if (previous === undefined) {
      seen.set(key, record);
    } else {
      // Two spellings of one path matter to an extractor only when both are extracted.
      const clash = new SigningError('zip_duplicate_entry', `entries ${JSON.stringify(previous.name)} and ${quoted()} name the same path`, { details: { name: record.name } });
      const blamed = leniency ?? leniencies[previous.index]!;
      if (blamed === null) throw clash;
      blamed.tolerated.push(clash);
      if (leniency === null) seen.set(key, record);
    }
    if (leniency === null) checkDeclaredSize(record, limits);
    else judge(leniency, 'content', () => checkDeclaredSize(record, limits));
    // A discarded entry is never inflated, so it does not count towards the archive's total.
    if (leniency !== null) continue;
    total += record.uncompressedSize;
    if (total > limits.maxTotalUncompressedSize) {
      throw new SigningError('zip_bomb', `archive expands to more than ${limits.maxTotalUncompressedSize} bytes`);
    }
  }
  return leniencies;
}

/** What reading the entry's data needs: no encryption, a supported method, consistent stored sizes. */
function checkReadable(record: CentralRecord): void {
  const quoted = (): string => JSON.stringify(record.name);
  // APPNOTE 4.4.4 bits 0, 6, 13: traditional, strong and central-directory encryption.
  if ((record.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_HEADERS)) !== 0) {
    throw new SigningError('zip_unsupported', `entry ${quoted()} is encrypted`, { details: { name: record.name } });
  }
  // APPNOTE 4.4.5: only 0 (stored) and 8 (deflated) are read.
  if (record.method !== METHOD_STORED && record.method !== METHOD_DEFLATED) {
    throw new SigningError('zip_unsupported', `entry ${quoted()} uses compression method ${record.method}`, { details: { name: record.name, method: record.method } });
  }
  if (record.method === METHOD_STORED && record.compressedSize !== record.uncompressedSize) {
    throw new SigningError('zip_invalid', `stored entry ${quoted()} has different compressed and uncompressed sizes`);
  }
}

function checkDeclaredSize(record: CentralRecord, limits: ZipLimits): void {
  if (record.uncompressedSize > limits.maxEntryUncompressedSize) {
    throw new SigningError('zip_bomb', `entry ${JSON.stringify(record.name)} expands to ${record.uncompressedSize} bytes, more than the limit of ${limits.maxEntryUncompressedSize}`, { details: { name: record.name } });
  }
  if (record.uncompressedSize > limits.compressionRatioThreshold && record.uncompressedSize > record.compressedSize * limits.maxCompressionRatio) {
    throw new SigningError('zip_bomb', `entry ${JSON.stringify(record.name)} has a compression ratio above ${limits.maxCompressionRatio}:1`, { details: { name: record.name } });
  }
}
