// The Mach-O files of the shared fixture corpus the iOS signer tests run over.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { sharedFixture } from '../../../support/fixtures.ts';

export interface HqtsmPair {
  name: string;
  unsigned: string;
  /** The same binary signed ad-hoc by Apple's codesign (macOS 11.6.8). */
  apple: string;
}

/** hqtsm/mach `u` (unsigned) / `us` (Apple ad-hoc) pairs. */
export function hqtsmPairs(): HqtsmPair[] {
  const root = sharedFixture('ios/macho/hqtsm-mach/macho');
  if (!root) return [];
  const pairs: HqtsmPair[] = [];
  for (const kind of readdirSync(root)) {
    for (const arch of readdirSync(path.join(root, kind, 'dist'))) {
      const dir = path.join(root, kind, 'dist', arch);
      for (const file of readdirSync(path.join(dir, 'u'))) {
        pairs.push({ name: `${kind}/${arch}/${file}`, unsigned: path.join(dir, 'u', file), apple: path.join(dir, 'us', file) });
      }
    }
  }
  return pairs.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Corpus files that are malformed on purpose or by accident: isign's "unsigned" fat executable
 * was cut short by its stripping script — each slice's __LINKEDIT runs past the slice, and
 * llvm-objdump refuses it as well ("fileoff field plus filesize field … extends past the end").
 */
export const MALFORMED_FIXTURES = ['isign/Test_unsigned_fat.app/isignTestApp'];

export function isMalformedFixture(file: string): boolean {
  return MALFORMED_FIXTURES.some((suffix) => file.endsWith(suffix));
}

/** Every Mach-O file in the corpus (hqtsm, zsign dylibs, isign apps). */
export function allFixtureBinaries(): string[] {
  const out: string[] = [];
  for (const pair of hqtsmPairs()) out.push(pair.unsigned, pair.apple);
  const zsign = sharedFixture('ios/macho/zsign');
  if (zsign) out.push(...readdirSync(zsign).map((f) => path.join(zsign, f)));
  for (const app of ['Test.app', 'Test_unsigned_fat.app', 'Test_unsigned_thin.app']) {
    const dir = sharedFixture(`ios/isign/${app}`);
    if (!dir) continue;
    out.push(path.join(dir, 'isignTestApp'));
    const frameworks = path.join(dir, 'Frameworks');
    try {
      out.push(...readdirSync(frameworks).map((f) => path.join(frameworks, f)).filter((f) => statSync(f).isFile()));
    } catch {
      // some mirrors lack Frameworks/
    }
  }
  return out;
}
