// Builds `_CodeSignature/CodeResources` for an iOS bundle (resources.cpp ResourceBuilder::scan
// and CodeSigner's resource sealing; ios-signing.md §10). Pure: the caller supplies the final
// digests of every file, so nested code must already be signed (inside-out order).
import { SigningError } from '../../errors.ts';
import { plistBoolean, plistData, plistDict, plistReal, plistString, writeXmlPlist, type PlistValue } from '../../plist/index.ts';
import { IOS_RULES, IOS_RULES2, RuleMatcher, isExcluded, type ResourceRule } from './rules.ts';
import type { BundleFile } from './types.ts';

export interface BuildCodeResourcesOptions {
  /** The bundle's main executable (relative path), never sealed as a resource. */
  mainExecutable: string | undefined;
  /** Whether the bundle's digest set includes SHA-1: then files2 carries `hash` beside `hash2`. */
  sha1: boolean;
}

export interface BuiltCodeResources {
  bytes: Buffer;
  /** Paths sealed in files2 (for the caller's "nothing unsealed" bookkeeping). */
  sealed: string[];
}

const V1 = new RuleMatcher(IOS_RULES);
const V2 = new RuleMatcher(IOS_RULES2);

export function buildCodeResources(bundleFiles: readonly BundleFile[], options: BuildCodeResourcesOptions): BuiltCodeResources {
  const files = new Map<string, PlistValue>();
  const files2 = new Map<string, PlistValue>();
  const sealed: string[] = [];
  for (const file of bundleFiles) {
    if (isExcluded(file.path, options.mainExecutable)) continue;
    const v1 = V1.match(file.path);
    // V1 seals regular files only (resources.cpp: symlinks have no V1 representation).
    if (v1 !== undefined && !v1.omit && file.kind === 'file') {
      files.set(file.path, v1.optional ? plistDict([['hash', plistData(file.sha1)], ['optional', plistBoolean(true)]]) : plistData(file.sha1));
    }
    const v2 = V2.match(file.path);
    if (v2 === undefined || v2.omit) continue;
    if (v2.nested) {
      // iOS rules make `^` (20) outweigh nested (10); a nested match means different rules.
      throw new SigningError('code_signature_invalid', `CodeResources: ${JSON.stringify(file.path)} would be sealed as nested code, which iOS rules never do`);
    }
    const entry: Array<[string, PlistValue]> = [];
    if (file.kind === 'symlink') entry.push(['symlink', plistString(file.target)]);
    else {
      if (options.sha1) entry.push(['hash', plistData(file.sha1)]);
      entry.push(['hash2', plistData(file.sha256)]);
    }
    if (v2.optional) entry.push(['optional', plistBoolean(true)]);
    files2.set(file.path, plistDict(entry));
    sealed.push(file.path);
  }
  const plist = plistDict([
    ['files', plistDict(files)],
    ['files2', plistDict(files2)],
    ['rules', rulesDict(IOS_RULES)],
    ['rules2', rulesDict(IOS_RULES2)],
  ]);
  // CoreFoundation's XML format with sorted keys, as codesign writes it; these exact bytes are
  // hashed into special slot 3 of the main executable.
  return { bytes: writeXmlPlist(plist), sealed };
}

function rulesDict(rules: readonly ResourceRule[]): PlistValue {
  return plistDict(
    rules.map((r): [string, PlistValue] => {
      if (r.plain) return [r.pattern, plistBoolean(true)];
      const flags: Array<[string, PlistValue]> = [];
      if (r.nested) flags.push(['nested', plistBoolean(true)]);
      if (r.omit) flags.push(['omit', plistBoolean(true)]);
      if (r.optional) flags.push(['optional', plistBoolean(true)]);
      flags.push(['weight', plistReal(r.weight)]);
      return [r.pattern, plistDict(flags)];
    }),
  );
}
