// BOM container ("BOMStore") reader (SPECIFICATION.md §2). Hand-written: no npm package reads
// BOM files. All integers are big-endian. The file is a table of numbered blocks, a table of named
// variables pointing at blocks, and B+trees whose nodes are blocks. Every block address, count
// and tree walk is bounded so a hostile file cannot read outside the buffer, allocate without
// limit or loop.
import { SigningError } from '../../errors.ts';

const MAGIC = 'BOMStore';
const HEADER_SIZE = 32;
/** Real catalogs have a few thousand blocks; a million is far beyond any of them. */
const MAX_BLOCKS = 1_000_000;
const MAX_VARS = 1024;
/** B+trees of real catalogs are 1–3 levels deep. */
const MAX_TREE_DEPTH = 32;

export interface BomBlock {
  readonly offset: number;
  readonly length: number;
}

const FREE: BomBlock = { offset: 0, length: 0 };

export interface BomStore {
  readonly bytes: Buffer;
  readonly blocks: readonly BomBlock[];
  /** Variable name → block index. */
  readonly vars: ReadonlyMap<string, number>;
}

export interface BomTreeEntry {
  readonly key: Buffer;
  readonly value: Buffer;
}

export function bomError(message: string): SigningError {
  return new SigningError('asset_catalog_invalid', `Assets.car: ${message}`);
}

/** §2.1: header, block index and variables. */
export function parseBom(bytes: Buffer): BomStore {
  if (bytes.length < HEADER_SIZE || bytes.toString('latin1', 0, 8) !== MAGIC) throw bomError('not a BOM store (no "BOMStore" magic)');
  const version = bytes.readUInt32BE(8);
  if (version !== 1) throw bomError(`BOM version ${version} is not 1`);
  const indexOffset = bytes.readUInt32BE(16);
  const indexLength = bytes.readUInt32BE(20);
  const varsOffset = bytes.readUInt32BE(24);
  const varsLength = bytes.readUInt32BE(28);
  checkRange(bytes, indexOffset, indexLength, 'block index');
  checkRange(bytes, varsOffset, varsLength, 'variable table');

  // §2.2 block index: u32 count, then count × {u32 address, u32 length}.
  if (indexLength < 4) throw bomError('block index is too short');
  const count = bytes.readUInt32BE(indexOffset);
  if (count > MAX_BLOCKS || 4 + count * 8 > indexLength) throw bomError(`block index declares ${count} blocks in ${indexLength} bytes`);
  const blocks: BomBlock[] = [];
  for (let i = 0; i < count; i++) {
    const at = indexOffset + 4 + i * 8;
    const offset = bytes.readUInt32BE(at);
    const length = bytes.readUInt32BE(at + 4);
    // Free slots are written as {0, 0} or {0xffffffff, 0xffffffff}; a block that lies outside
    // the file is kept as a free slot too, and using it is an error (bomBlock).
    blocks.push(offset + length > bytes.length ? FREE : { offset, length });
  }

  // §2.3 variables: u32 count, then {u32 block, u8 name length, name}.
  if (varsLength < 4) throw bomError('variable table is too short');
  const varCount = bytes.readUInt32BE(varsOffset);
  if (varCount > MAX_VARS) throw bomError(`variable table declares ${varCount} variables`);
  const vars = new Map<string, number>();
  let at = varsOffset + 4;
  const varsEnd = varsOffset + varsLength;
  for (let i = 0; i < varCount; i++) {
    if (at + 5 > varsEnd) throw bomError('variable table is truncated');
    const block = bytes.readUInt32BE(at);
    const nameLength = bytes[at + 4]!;
    if (at + 5 + nameLength > varsEnd) throw bomError('variable name runs past the table');
    vars.set(bytes.toString('latin1', at + 5, at + 5 + nameLength), block);
    at += 5 + nameLength;
  }
  return { bytes, blocks, vars };
}

/** The bytes of block `index`; index 0 and unused blocks are errors. */
export function bomBlock(store: BomStore, index: number, what: string): Buffer {
  const block = index > 0 ? store.blocks[index] : undefined;
  if (block === undefined || block === FREE) throw bomError(`${what} refers to missing block ${index}`);
  return store.bytes.subarray(block.offset, block.offset + block.length);
}

/** The block a named variable points at. */
export function bomVar(store: BomStore, name: string): Buffer | null {
  const index = store.vars.get(name);
  return index === undefined ? null : bomBlock(store, index, `variable ${name}`);
}

/**
 * §2.4: every {key, value} of the B+tree named by variable `name`, in key order. The walk
 * descends the leftmost path, then follows the leaves' forward links; each node is visited once.
 */
export function bomTree(store: BomStore, name: string, maxEntries: number): BomTreeEntry[] {
  const tree = bomVar(store, name);
  if (tree === null) throw bomError(`has no ${name} tree`);
  if (tree.length < 21 || tree.toString('latin1', 0, 4) !== 'tree') throw bomError(`${name} is not a BOM tree`);
  let node = tree.readUInt32BE(8);
  const visited = new Set<number>();
  for (let depth = 0; ; depth++) {
    if (depth > MAX_TREE_DEPTH) throw bomError(`${name} tree is deeper than ${MAX_TREE_DEPTH} levels`);
    const paths = pathsBlock(store, node, name);
    if (paths.isLeaf) break;
    if (paths.count === 0) throw bomError(`${name} tree has an empty branch node`);
    visited.add(node);
    node = paths.block.readUInt32BE(12); // first child
    if (visited.has(node)) throw bomError(`${name} tree has a cycle`);
  }
  const entries: BomTreeEntry[] = [];
  while (node !== 0) {
    if (visited.has(node)) throw bomError(`${name} tree leaves form a cycle`);
    visited.add(node);
    const paths = pathsBlock(store, node, name);
    if (!paths.isLeaf) throw bomError(`${name} tree links a leaf to a branch node`);
    if (entries.length + paths.count > maxEntries) throw bomError(`${name} tree has more than ${maxEntries} entries`);
    for (let i = 0; i < paths.count; i++) {
      const value = bomBlock(store, paths.block.readUInt32BE(12 + i * 8), `${name} value`);
      const key = bomBlock(store, paths.block.readUInt32BE(16 + i * 8), `${name} key`);
      entries.push({ key, value });
    }
    node = paths.forward;
  }
  return entries;
}

// §2.4 paths node: u16 isLeaf, u16 count, u32 forward, u32 backward, count × {u32, u32}.
function pathsBlock(store: BomStore, index: number, name: string): { block: Buffer; isLeaf: boolean; count: number; forward: number } {
  const block = bomBlock(store, index, `${name} tree node`);
  if (block.length < 12) throw bomError(`${name} tree node ${index} is truncated`);
  const count = block.readUInt16BE(2);
  if (12 + count * 8 > block.length) throw bomError(`${name} tree node ${index} declares ${count} entries in ${block.length} bytes`);
  return { block, isLeaf: block.readUInt16BE(0) !== 0, count, forward: block.readUInt32BE(4) };
}

function checkRange(bytes: Buffer, offset: number, length: number, what: string): void {
  if (offset < HEADER_SIZE || offset + length > bytes.length) throw bomError(`${what} (${offset}+${length}) lies outside the file`);
}
