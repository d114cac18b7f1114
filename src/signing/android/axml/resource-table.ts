// resources.arsc → a lookup from resource id to its variants (one per configuration).
// The table is indexed, not expanded: type chunks are located once and entries are read on
// demand, so a 10 MB table of a large app costs one pass over its chunk headers.
// Handles the newer aapt2 layouts from the start: sparse types, 16-bit offsets and compact
// entries (research note android-signing.md §14.1 "Risk").
import {
  RES_STRING_POOL_TYPE, RES_TABLE_PACKAGE_TYPE, RES_TABLE_TYPE, RES_TABLE_TYPE_TYPE,
  childChunks, invalid, readChunk, u16, u32, u8, type Chunk,
} from './chunk.ts';
import { readConfig, type ResConfig } from './config.ts';
import { readResValue, type ResValue } from './res-value.ts';
import { StringPool } from './string-pool.ts';

// ResourceTypes.h: ResTable_type::FLAG_SPARSE, FLAG_OFFSET16; ResTable_type::NO_ENTRY
const FLAG_SPARSE = 0x01;
const FLAG_OFFSET16 = 0x02;
const NO_ENTRY_32 = 0xffffffff;
const NO_ENTRY_16 = 0xffff;
// ResourceTypes.h: ResTable_entry::FLAG_COMPLEX, FLAG_COMPACT
const ENTRY_FLAG_COMPLEX = 0x0001;
const ENTRY_FLAG_COMPACT = 0x0008;
// ResourceTypes.h: struct ResTable_package is 284 bytes up to lastPublicKey, 288 with typeIdOffset.
const PACKAGE_HEADER_MIN = 284;
// ResourceTypes.h: struct ResTable_type { header; uint8_t id; uint8_t flags; uint16_t reserved;
// uint32_t entryCount; uint32_t entriesStart; ResTable_config config; }
const TYPE_HEADER_FIXED = 20;

export interface ResVariant {
  readonly config: ResConfig;
  /** The simple value, or null for a complex (bag) entry: styles, arrays, plurals. */
  readonly value: ResValue | null;
}

interface TypeChunk {
  readonly id: number;
  readonly sparse: boolean;
  readonly offset16: boolean;
  readonly entryCount: number;
  readonly offsetsAt: number;
  readonly entriesAt: number;
  readonly end: number;
  readonly config: ResConfig;
}

interface ResPackage {
  readonly id: number;
  readonly name: string;
  readonly typeIdOffset: number;
  typeNames: StringPool | null;
  keyNames: StringPool | null;
  readonly types: Map<number, TypeChunk[]>;
}

export class ResourceTable {
  readonly strings: StringPool;
  private readonly buf: Buffer;
  private readonly packages: Map<number, ResPackage>;

  private constructor(buf: Buffer, strings: StringPool, packages: Map<number, ResPackage>) {
    this.buf = buf;
    this.strings = strings;
    this.packages = packages;
  }

  /** Parses the table's chunk structure. Throws SigningError manifest_invalid when malformed. */
  static parse(buf: Buffer): ResourceTable {
    const what = 'resources.arsc';
    const top = readChunk(buf, 0, buf.length, what);
    // ResourceTypes.h: struct ResTable_header { ResChunk_header header; uint32_t packageCount; }
    if (top.type !== RES_TABLE_TYPE) invalid(`${what}: first chunk type is 0x${top.type.toString(16)}, not RES_TABLE_TYPE (0x0002)`);
    if (top.headerSize < 12) invalid(`${what}: table header size ${top.headerSize} < 12`);
    let strings: StringPool | null = null;
    const packages = new Map<number, ResPackage>();
    for (const chunk of childChunks(buf, top.headerSize, top.size, what)) {
      if (chunk.type === RES_STRING_POOL_TYPE) strings ??= new StringPool(buf, chunk);
      else if (chunk.type === RES_TABLE_PACKAGE_TYPE) mergePackage(packages, readPackage(buf, chunk));
      // ResTable::parseTable ignores other chunk types with a warning.
    }
    if (strings === null) invalid(`${what}: no global value string pool`);
    return new ResourceTable(buf, strings, packages);
  }

  /** Every configuration in which `resId` has an entry, in table order. Unknown ids give []. */
  variants(resId: number): ResVariant[] {
    const pkg = this.packageFor(resId >>> 24);
    const types = pkg?.types.get((resId >>> 16) & 0xff);
    if (types === undefined) return [];
    const index = resId & 0xffff;
    const out: ResVariant[] = [];
    for (const type of types) {
      const entryAt = this.entryOffset(type, index);
      if (entryAt !== null) out.push({ config: type.config, value: this.readEntryValue(type, entryAt) });
    }
    return out;
  }

  /** "mipmap/ic_launcher" for display, or null when the id is unknown. */
  nameOf(resId: number): string | null {
    const pkg = this.packageFor(resId >>> 24);
    const typeId = (resId >>> 16) & 0xff;
    const types = pkg?.types.get(typeId);
    if (pkg === undefined || types === undefined) return null;
    const typeIndex = typeId - 1 - pkg.typeIdOffset;
    const typeName = pkg.typeNames !== null && typeIndex >= 0 && typeIndex < pkg.typeNames.count ? pkg.typeNames.get(typeIndex) : null;
    for (const type of types) {
      const entryAt = this.entryOffset(type, resId & 0xffff);
      if (entryAt === null) continue;
      const keyIndex = this.entryKey(type, entryAt);
      const key = pkg.keyNames !== null && keyIndex < pkg.keyNames.count ? pkg.keyNames.get(keyIndex) : null;
      return `${typeName ?? `type${typeId}`}/${key ?? `0x${(resId & 0xffff).toString(16)}`}`;
    }
    return null;
  }

  /** Package id 0 is a shared library's own package (resolved at runtime); use the only package. */
  private packageFor(id: number): ResPackage | undefined {
    const pkg = this.packages.get(id);
    if (pkg !== undefined || id !== 0 || this.packages.size !== 1) return pkg;
    return this.packages.values().next().value;
  }

  private entryOffset(type: TypeChunk, index: number): number | null {
    const what = `type chunk ${type.id}`;
    let offset: number;
    if (type.sparse) {
      // ResourceTypes.h: struct ResTable_sparseTypeEntry { uint16_t idx; uint16_t offset; } sorted
      // by idx; offset is in 4-byte units.
      let lo = 0;
      let hi = type.entryCount - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const idx = u16(this.buf, type.offsetsAt + mid * 4, what);
        if (idx === index) { found = mid; break; }
        if (idx < index) lo = mid + 1;
        else hi = mid - 1;
      }
      if (found < 0) return null;
      offset = u16(this.buf, type.offsetsAt + found * 4 + 2, what) * 4;
    } else {
      if (index >= type.entryCount) return null;
      if (type.offset16) {
        // ResTable_type::FLAG_OFFSET16: uint16_t offsets in 4-byte units, 0xffff = no entry.
        const raw = u16(this.buf, type.offsetsAt + index * 2, what);
        if (raw === NO_ENTRY_16) return null;
        offset = raw * 4;
      } else {
        const raw = u32(this.buf, type.offsetsAt + index * 4, what);
        if (raw === NO_ENTRY_32) return null;
        offset = raw;
      }
    }
    const at = type.entriesAt + offset;
    if (at + 8 > type.end) invalid(`${what}: entry ${index} at offset ${offset} runs past the chunk`);
    return at;
  }

  private entryKey(type: TypeChunk, at: number): number {
    const what = `type chunk ${type.id} entry`;
    const flags = u16(this.buf, at + 2, what);
    // ResTable_entry (compact): { uint16_t key; uint16_t flags; uint32_t data; }
    return (flags & ENTRY_FLAG_COMPACT) !== 0 ? u16(this.buf, at, what) : u32(this.buf, at + 4, what);
  }

  private readEntryValue(type: TypeChunk, at: number): ResValue | null {
    const what = `type chunk ${type.id} entry`;
    const flags = u16(this.buf, at + 2, what);
    // ResTable_entry::FLAG_COMPACT: the value type sits in the high byte of flags and the data
    // word replaces the key reference's successor (ResourceTypes.h, compact entry layout).
    if ((flags & ENTRY_FLAG_COMPACT) !== 0) return { type: flags >>> 8, data: u32(this.buf, at + 4, what) };
    if ((flags & ENTRY_FLAG_COMPLEX) !== 0) return null;
    // ResourceTypes.h: struct ResTable_entry { uint16_t size; uint16_t flags; ResStringPool_ref key; }
    // followed by a Res_value at entry + size.
    const size = u16(this.buf, at, what);
    if (size < 8 || at + size + 8 > type.end) invalid(`${what}: entry size ${size} leaves no room for its value`);
    return readResValue(this.buf, at + size, what);
  }
}

function readPackage(buf: Buffer, chunk: Chunk): ResPackage {
  const what = 'resources.arsc package';
  if (chunk.headerSize < PACKAGE_HEADER_MIN) invalid(`${what}: header size ${chunk.headerSize} < ${PACKAGE_HEADER_MIN}`);
  const base = chunk.offset;
  // ResourceTypes.h: struct ResTable_package { header; uint32_t id; uint16_t name[128];
  // uint32_t typeStrings; uint32_t lastPublicType; uint32_t keyStrings; uint32_t lastPublicKey;
  // uint32_t typeIdOffset; }
  const id = u32(buf, base + 8, what);
  if (id > 0xff) invalid(`${what}: package id ${id} does not fit in 8 bits`);
  const nameUnits: number[] = [];
  for (let i = 0; i < 128; i++) {
    const unit = u16(buf, base + 12 + i * 2, what);
    if (unit === 0) break;
    nameUnits.push(unit);
  }
  const typeStrings = u32(buf, base + 268, what);
  const keyStrings = u32(buf, base + 276, what);
  const typeIdOffset = chunk.headerSize >= 288 ? u32(buf, base + 284, what) : 0;
  const pkg: ResPackage = {
    id, name: String.fromCharCode(...nameUnits), typeIdOffset, typeNames: null, keyNames: null, types: new Map(),
  };
  const pools: StringPool[] = [];
  for (const child of childChunks(buf, base + chunk.headerSize, base + chunk.size, what)) {
    if (child.type === RES_STRING_POOL_TYPE) {
      const pool = new StringPool(buf, child);
      if (child.offset - base === typeStrings) pkg.typeNames = pool;
      else if (child.offset - base === keyStrings) pkg.keyNames = pool;
      else pools.push(pool);
    } else if (child.type === RES_TABLE_TYPE_TYPE) {
      const type = readType(buf, child);
      const list = pkg.types.get(type.id) ?? [];
      list.push(type);
      pkg.types.set(type.id, list);
    }
    // RES_TABLE_TYPE_SPEC_TYPE (public flags), LIBRARY, OVERLAYABLE, STAGED_ALIAS: not needed.
  }
  // Some obfuscated tables misstate typeStrings/keyStrings; fall back to pool order.
  pkg.typeNames ??= pools.shift() ?? null;
  pkg.keyNames ??= pools.shift() ?? null;
  return pkg;
}

function readType(buf: Buffer, chunk: Chunk): TypeChunk {
  const what = `type chunk at ${chunk.offset}`;
  const base = chunk.offset;
  const end = base + chunk.size;
  if (chunk.headerSize < TYPE_HEADER_FIXED + 28) invalid(`${what}: header size ${chunk.headerSize} is too small`);
  const id = u8(buf, base + 8, what);
  const flags = u8(buf, base + 9, what);
  const entryCount = u32(buf, base + 12, what);
  const entriesStart = u32(buf, base + 16, what);
  // ResTable_type: "id ... 0 is invalid".
  if (id === 0) invalid(`${what}: type id 0`);
  const { config, size: configSize } = readConfig(buf, base + TYPE_HEADER_FIXED, base + chunk.headerSize);
  if (TYPE_HEADER_FIXED + configSize > chunk.headerSize) invalid(`${what}: config runs past the header`);
  const sparse = (flags & FLAG_SPARSE) !== 0;
  const offset16 = !sparse && (flags & FLAG_OFFSET16) !== 0;
  const offsetsAt = base + chunk.headerSize;
  const offsetBytes = entryCount * (offset16 ? 2 : 4);
  if (entriesStart > chunk.size || offsetsAt + offsetBytes > base + entriesStart) {
    invalid(`${what}: ${entryCount} entry offsets do not fit before entriesStart ${entriesStart}`);
  }
  return { id, sparse, offset16, entryCount, offsetsAt, entriesAt: base + entriesStart, end, config };
}

function mergePackage(packages: Map<number, ResPackage>, pkg: ResPackage): void {
  const existing = packages.get(pkg.id);
  if (existing === undefined) {
    packages.set(pkg.id, pkg);
    return;
  }
  for (const [id, list] of pkg.types) existing.types.set(id, [...(existing.types.get(id) ?? []), ...list]);
}
