// Checks a bundle's files against its CodeResources seal, the way installd's resource check
// does (resources.cpp ResourceBuilder + SecStaticCode::validateResources): every sealed file
// present with the sealed hash, symlinks pointing where sealed, and no file the rules say must
// be sealed left out. The rules used are the ones written in the seal itself.
import { RuleMatcher, isExcluded } from './rules.ts';
import type { ParsedCodeResources } from './parse.ts';
import type { BundleFile, SealEntry } from './types.ts';

export interface SealCheckOptions {
  mainExecutable: string | undefined;
  /** Primary CodeDirectory hash (20 bytes) of nested code at a path, for `{cdhash}` entries. */
  nestedCdhash?: (path: string) => Buffer | undefined;
}

export interface SealProblem {
  path: string;
  problem: 'missing' | 'modified' | 'unsealed' | 'wrong_kind' | 'symlink_changed' | 'nested_changed';
}

export function checkSeal(seal: ParsedCodeResources, bundleFiles: readonly BundleFile[], options: SealCheckOptions): SealProblem[] {
  const problems: SealProblem[] = [];
  const byPath = new Map(bundleFiles.map((f) => [f.path, f]));
  const v2 = seal.rules2.length > 0;
  const entries: ReadonlyMap<string, SealEntry> = v2 ? seal.files2 : new Map([...seal.files].map(([p, e]): [string, SealEntry] => [p, { kind: 'file', sha1: e.sha1, optional: e.optional }]));

  for (const [path, sealed] of entries) {
    const actual = byPath.get(path);
    if (sealed.kind === 'nested') {
      const cdhash = options.nestedCdhash?.(path);
      if (cdhash === undefined) {
        if (!sealed.optional) problems.push({ path, problem: 'missing' });
      } else if (!cdhash.subarray(0, sealed.cdhash.length).equals(sealed.cdhash)) problems.push({ path, problem: 'nested_changed' });
      continue;
    }
    if (actual === undefined) {
      if (!sealed.optional) problems.push({ path, problem: 'missing' });
      continue;
    }
    if (sealed.kind === 'symlink') {
      if (actual.kind !== 'symlink') problems.push({ path, problem: 'wrong_kind' });
      else if (actual.target !== sealed.target) problems.push({ path, problem: 'symlink_changed' });
      continue;
    }
    if (actual.kind !== 'file') {
      problems.push({ path, problem: 'wrong_kind' });
      continue;
    }
    // The strongest hash sealed decides (hash2 = SHA-256, hash = SHA-1).
    const ok = sealed.sha256 !== undefined ? sealed.sha256.equals(actual.sha256) : sealed.sha1 !== undefined && sealed.sha1.equals(actual.sha1);
    if (!ok) problems.push({ path, problem: 'modified' });
  }

  const matcher = new RuleMatcher(v2 ? seal.rules2 : seal.rules);
  for (const file of bundleFiles) {
    if (entries.has(file.path) || isExcluded(file.path, options.mainExecutable)) continue;
    const rule = matcher.match(file.path);
    if (rule === undefined || rule.omit) continue;
    if (!v2 && file.kind === 'symlink') continue;
    // Under a nested rule the file belongs to nested code sealed by its directory's entry.
    if (rule.nested && [...entries.keys()].some((p) => file.path.startsWith(`${p}/`))) continue;
    problems.push({ path: file.path, problem: 'unsealed' });
  }
  return problems;
}
