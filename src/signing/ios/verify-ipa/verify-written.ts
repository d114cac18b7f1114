// Verifying an .ipa the re-signer has just written, from the proof it returned (resign/proof.ts),
// without a second content pass over what it copied (SPECIFICATION.md, "Verifying what was
// written"). The output's zip structure is read and checked as for any input; then:
//   - every entry the re-signer copied is proved by its method, CRC-32, sizes and compressed
//     bytes being identical to the input entry's, whose content the signing pass inflated
//     (checking that same CRC-32) and hashed: identical compressed bytes inflate to identical
//     content, so those digests are the output entry's digests;
//   - every entry it wrote (signed Mach-O files, CodeResources, profiles, Info.plist) is read back
//     from the output bytes and checked in full, exactly as verifyIpa checks any app: code
//     signatures with every page hash, CMS and special slot, seals against the digests of every
//     file, profiles against bundle ids, signer and entitlements (a signed file's page hashes and
//     digests taken from the output already by the re-signer's thread, where it did: proof.readBack);
//   - an entry that is in the output but in neither list, or in a list but not in the output, is
//     a problem.
// For an .ipa Signet did not write (or without the proof) use verifyIpa, which proves everything
// from the bytes alone.
import type { DataSource } from '../../data-source.ts';
import { collectBetweenPhases } from '../../reclaim.ts';
import type { ZipEntry } from '../../zip/index.ts';
import { discoverLayout, openIpa } from '../bundle/index.ts';
import type { CopiedEntry, ResignProof } from '../resign/proof.ts';
import { ReadAheadSource } from '../resign/read-ahead.ts';
import { scanEntries, type FileRecord } from '../resign/scan.ts';
import type { IpaVerification } from './report.ts';
import { verifyScanned, type VerifyIpaOptions } from './verify-ipa.ts';

const COMPARE_WINDOW = 1024 * 1024;

/** `output`: what resignIpaProved wrote from `input`, with the `proof` it returned. */
export async function verifyWritten(output: DataSource, input: DataSource, proof: ResignProof, options: VerifyIpaOptions = {}): Promise<IpaVerification> {
  // The re-sign's buffers are garbage now: let them go before the largest files are read back —
  // unless the re-signer's thread read them back already: then the full collection only costs
  // time (bench:ipa, 5 alternating pairs: random app 2.56 against 2.61 s, code app 4.06 against
  // 4.28 s, 0.1-0.3 s less CPU, the same peak RSS).
  if (proof.readBack.size === 0) collectBetweenPhases();
  const zip = await openIpa(output);
  const layout = await discoverLayout(zip, { brokenBundles: 'report' });
  const problems: string[] = [];
  if (input.size !== proof.inputSize) problems.push(`the input is ${input.size} bytes, not the ${proof.inputSize} the re-signer read`);
  const records = new Map<string, FileRecord>();
  const present = new Set<string>();
  // Each pair of views is compared and dropped before the next read: the windows are refilled in
  // place rather than leaving a 1 MiB buffer per read to the GC.
  const fromOutput = new ReadAheadSource(output, COMPARE_WINDOW, { reuse: true });
  const fromInput = new ReadAheadSource(input, COMPARE_WINDOW, { reuse: true });
  for (const entry of zip.entriesInFileOrder()) {
    present.add(entry.name);
    const copied = proof.copied.get(entry.name);
    if (copied === undefined) {
      if (!proof.written.has(entry.name)) problems.push(`${entry.name} is in the output but the re-signer neither copied nor wrote it`);
      continue;
    }
    const differs = copiedEntryDiffers(entry, copied);
    if (differs !== undefined) {
      problems.push(`${entry.name}: ${differs} differs from the input entry it was copied from`);
      continue;
    }
    if (!(await sameBytes(fromOutput, entry.dataOffset, fromInput, copied.inputDataOffset, entry.compressedSize))) {
      problems.push(`${entry.name}: its compressed bytes differ from the input entry it was copied from`);
      continue;
    }
    if (copied.record !== undefined) records.set(entry.name, copied.record);
  }
  for (const name of [...proof.copied.keys(), ...proof.written]) if (!present.has(name)) problems.push(`${name} was written but is not in the output`);
  // The files the re-signer wrote: hashed (and Mach-O files found) from the output bytes.
  const rewritten = layout.appFiles.filter((e) => !proof.copied.has(e.name));
  const scan = await scanEntries(zip, rewritten);
  for (const [name, record] of scan.records) records.set(name, record);
  // A copied file of the app without digests would leave its seal unchecked: refuse.
  for (const entry of layout.appFiles) {
    if (!records.has(entry.name) && !scan.machO.has(entry.name)) problems.push(`${entry.name} has no digest to check its seal with`);
  }
  // Copied Mach-O files are those the pass found not signable: sealed as resources (their
  // digests are proved above), with no code signature to check — as verifyIpa skips them.
  return verifyScanned(zip, layout, { records, machO: scan.machO }, problems, options, proof.readBack);
}

function copiedEntryDiffers(entry: ZipEntry, copied: CopiedEntry): string | undefined {
  if (entry.method !== copied.method) return 'its compression method';
  if (entry.crc32 !== copied.crc32) return 'its CRC-32';
  if (entry.compressedSize !== copied.compressedSize || entry.uncompressedSize !== copied.uncompressedSize) return 'its size';
  return undefined;
}

async function sameBytes(a: DataSource, aOffset: number, b: DataSource, bOffset: number, length: number): Promise<boolean> {
  for (let done = 0; done < length; done += COMPARE_WINDOW) {
    const n = Math.min(COMPARE_WINDOW, length - done);
    const [x, y] = await Promise.all([a.read(aOffset + done, n), b.read(bOffset + done, n)]);
    if (!x.equals(y)) return false;
  }
  return true;
}
