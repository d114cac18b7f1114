// Reads `_CodeSignature/CodeResources` (files, files2, rules, rules2) into a typed seal.
// Accepts every entry form Apple writes: `<data>` (SHA-1), `{hash, hash2, optional}`,
// `{symlink, optional}` and nested code `{cdhash, requirement}` (resources.cpp ResourceSeal).
import { SigningError } from '../../errors.ts';
import { parsePlist, type PlistDict, type PlistValue } from '../../plist/index.ts';
import { ruleFromPlist, type ResourceRule } from './rules.ts';
import type { CodeResourcesSeal, SealEntry } from './types.ts';

export interface ParsedCodeResources extends CodeResourcesSeal {
  readonly rules: ResourceRule[];
  readonly rules2: ResourceRule[];
}

export function parseCodeResources(bytes: Buffer): ParsedCodeResources {
  let root: PlistValue;
  try {
    root = parsePlist(bytes).value;
  } catch (cause) {
    throw invalid(`it is not a property list: ${(cause as Error).message}`, cause);
  }
  if (root.type !== 'dict') throw invalid('the root is not a dictionary');
  const files = new Map<string, { sha1: Buffer; optional: boolean }>();
  for (const [path, value] of dictOf(root, 'files')) {
    const entry = sealEntry(path, value);
    if (entry.kind === 'file' && entry.sha1 !== undefined) files.set(path, { sha1: entry.sha1, optional: entry.optional });
  }
  const files2 = new Map<string, SealEntry>();
  for (const [path, value] of dictOf(root, 'files2')) files2.set(path, sealEntry(path, value));
  return {
    files,
    files2,
    rules: [...dictOf(root, 'rules')].map(([pattern, v]) => ruleFromPlist(pattern, v)),
    rules2: [...dictOf(root, 'rules2')].map(([pattern, v]) => ruleFromPlist(pattern, v)),
  };
}

function dictOf(root: PlistDict, key: string): Map<string, PlistValue> {
  const value = root.value.get(key);
  if (value === undefined) return new Map();
  if (value.type !== 'dict') throw invalid(`"${key}" is not a dictionary`);
  return value.value;
}

function sealEntry(path: string, value: PlistValue): SealEntry {
  if (value.type === 'data') return { kind: 'file', sha1: Buffer.from(value.value), optional: false };
  if (value.type !== 'dict') throw invalid(`the entry for ${JSON.stringify(path)} is neither data nor a dictionary`);
  const get = (key: string): PlistValue | undefined => value.value.get(key);
  const optional = get('optional')?.type === 'boolean' && (get('optional') as { value: boolean }).value;
  const symlink = get('symlink');
  if (symlink !== undefined) {
    if (symlink.type !== 'string') throw invalid(`the symlink of ${JSON.stringify(path)} is not a string`);
    return { kind: 'symlink', target: symlink.value, optional };
  }
  const cdhash = get('cdhash');
  if (cdhash !== undefined) {
    const requirement = get('requirement');
    if (cdhash.type !== 'data') throw invalid(`the cdhash of ${JSON.stringify(path)} is not data`);
    return { kind: 'nested', cdhash: Buffer.from(cdhash.value), requirement: requirement?.type === 'string' ? requirement.value : '', optional };
  }
  const hash = get('hash');
  const hash2 = get('hash2');
  if (hash !== undefined && hash.type !== 'data') throw invalid(`the hash of ${JSON.stringify(path)} is not data`);
  if (hash2 !== undefined && hash2.type !== 'data') throw invalid(`the hash2 of ${JSON.stringify(path)} is not data`);
  if (hash === undefined && hash2 === undefined) throw invalid(`the entry for ${JSON.stringify(path)} has no hash`);
  return {
    kind: 'file',
    ...(hash?.type === 'data' ? { sha1: Buffer.from(hash.value) } : {}),
    ...(hash2?.type === 'data' ? { sha256: Buffer.from(hash2.value) } : {}),
    optional,
  };
}

function invalid(reason: string, cause?: unknown): SigningError {
  return new SigningError('code_signature_invalid', `_CodeSignature/CodeResources cannot be read: ${reason}`, cause === undefined ? undefined : { cause });
}
