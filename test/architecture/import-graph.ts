// Reads the import graph of src/ from the source text: static imports and re-exports (type-only ones
// included, they are arrows too), dynamic import('…'), and module URLs handed to worker threads
// (new URL('./x.ts', import.meta.url)), which are imports by another name.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface ImportEdge {
  readonly from: string; // path relative to src/, with forward slashes
  readonly to: string;
}

const SPECIFIER = [
  /^(?:import|export)\s[^'";]*?\sfrom\s*'([^']+)'/gm,
  /^import\s*'([^']+)'/gm,
  /\bimport\(\s*'([^']+)'\s*\)/g,
  /\bnew URL\(\s*'([^']+)'\s*,\s*import\.meta\.url\s*\)/g,
];

// Whole comment lines go (a comment may quote an import); static imports are matched only at the
// start of a line, where the code style puts them, so text inside strings cannot pose as one.
function withoutComments(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join('\n');
}

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const toKey = (root: string, path: string): string => relative(root, path).split(sep).join('/');

/** Every relative import between files under `root`; specifiers outside root are kept as given (../x). */
export function readImportGraph(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of listTs(root)) {
    const text = withoutComments(readFileSync(file, 'utf8'));
    const seen = new Set<string>();
    for (const pattern of SPECIFIER) {
      for (const match of text.matchAll(pattern)) {
        const specifier = match[1]!;
        if (!specifier.startsWith('.')) continue; // packages and node: builtins
        const target = resolve(dirname(file), specifier);
        const to = toKey(root, target);
        if (seen.has(to)) continue;
        seen.add(to);
        edges.push({ from: toKey(root, file), to });
      }
    }
  }
  return edges;
}

/** The top-level unit a file belongs to: its first folder under src/, or the file itself (errors.ts). */
export function topLevel(key: string): string {
  const slash = key.indexOf('/');
  return slash === -1 ? key.replace(/\.ts$/, '') : key.slice(0, slash);
}

/** Strongly connected components with more than one member (Tarjan), each sorted. */
export function cycles(nodes: Iterable<string>, edges: ReadonlyArray<readonly [string, string]>): string[][] {
  const next = new Map<string, string[]>();
  for (const node of nodes) next.set(node, []);
  for (const [a, b] of edges) {
    if (!next.has(a)) next.set(a, []);
    if (!next.has(b)) next.set(b, []);
    next.get(a)!.push(b);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || next.get(v)!.includes(v)) found.push(component.sort());
    }
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return found;
}

/**
 * The layers of GUIDE.md, top to bottom. A folder may import its own layer's peers (no cycles) and
 * any layer below; never one above. errors.ts and config.ts are shared leaves every layer above
 * the engines uses; the engines (signing) import nothing outside themselves.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['main'],
  ['http'],
  ['services', 'super-signature', 'distribution'],
  ['db', 'queue', 'storage', 'apple'],
  ['errors', 'config'],
  ['signing'],
];

export function layerOf(unit: string): number {
  const index = LAYERS.findIndex((layer) => layer.includes(unit));
  return index;
}

/** Every rule the graph must keep, as readable complaints (empty: all kept). */
export function violations(edges: readonly ImportEdge[], exists: (key: string) => boolean): string[] {
  const problems: string[] = [];
  const between = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (to.startsWith('../')) {
      // Only the wiring may reach outside src/ (the console's build folder it serves).
      if (topLevel(from) !== 'main') problems.push(`${from} reaches outside src/: ${to}`);
      continue;
    }
    if (!exists(to)) problems.push(`${from} imports ${to}, which does not exist`);
    const a = topLevel(from);
    const b = topLevel(to);
    if (layerOf(a) === -1) problems.push(`${from}: src/${a} is in no layer (add it to LAYERS)`);
    if (a === b) continue;
    if (a === 'signing') problems.push(`${from} imports ${to}: src/signing imports nothing outside itself`);
    else if (layerOf(b) < layerOf(a)) problems.push(`${from} imports ${to}: ${a} (layer ${layerOf(a)}) may not import ${b} (layer ${layerOf(b)}, above it)`);
    if (!between.has(a)) between.set(a, new Set());
    between.get(a)!.add(b);
  }
  const folderEdges = [...between].flatMap(([a, bs]) => [...bs].map((b) => [a, b] as const));
  for (const cycle of cycles(between.keys(), folderEdges)) problems.push(`folders import each other in a circle: ${cycle.join(' ⇄ ')}`);
  return problems;
}
