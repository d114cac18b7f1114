// A small encoder for binary XML (AXML) and resources.arsc, written from ResourceTypes.h, so
// tests can craft what aapt never emits (sparse types, 16-bit offsets, compact entries,
// 3-letter languages, long strings, hostile structures) and check that parse(encode(x)) == x.
// Test-only: Signet never writes these formats.

export interface EncAttr {
  ns?: string | null;
  name: string;
  /** Resource id for the resource map (0 / absent: none). */
  resId?: number;
  raw?: string | null;
  type: number;
  data?: number;
  /** For TYPE_STRING (0x03): the string; data becomes its pool index. */
  string?: string;
}

export interface EncElement {
  ns?: string | null;
  name: string;
  attrs?: EncAttr[];
  children?: EncElement[];
}

const u16 = (v: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16LE(v & 0xffff); return b; };
const u32 = (v: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); return b; };
const pad4 = (b: Buffer): Buffer => (b.length % 4 === 0 ? b : Buffer.concat([b, Buffer.alloc(4 - (b.length % 4))]));
const NONE = 0xffffffff;

function chunk(type: number, header: Buffer, body: Buffer): Buffer {
  return Buffer.concat([u16(type), u16(8 + header.length), u32(8 + header.length + body.length), header, body]);
}

/** ResStringPool with UTF-8 or UTF-16 strings (ResourceTypes.h length prefixes). */
export function encodeStringPool(strings: readonly string[], utf8: boolean): Buffer {
  const datas: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const s of strings) {
    let data: Buffer;
    if (utf8) {
      const bytes = Buffer.from(s, 'utf8');
      if (bytes.length > 0x7fff) throw new RangeError('a UTF-8 pool string is limited to 0x7fff bytes');
      const len8 = (n: number): Buffer => (n > 0x7f ? Buffer.from([0x80 | (n >> 8), n & 0xff]) : Buffer.from([n]));
      data = Buffer.concat([len8(s.length), len8(bytes.length), bytes, Buffer.from([0])]);
    } else {
      const units = Buffer.from(s, 'utf16le');
      const n = s.length;
      const len = n > 0x7fff ? Buffer.concat([u16(0x8000 | (n >>> 16)), u16(n & 0xffff)]) : u16(n);
      data = Buffer.concat([len, units, u16(0)]);
    }
    offsets.push(at);
    datas.push(data);
    at += data.length;
  }
  const stringData = pad4(Buffer.concat(datas));
  const headerRest = Buffer.concat([u32(strings.length), u32(0), u32(utf8 ? 0x100 : 0), u32(28 + strings.length * 4), u32(0)]);
  return chunk(0x0001, headerRest, Buffer.concat([...offsets.map(u32), stringData]));
}

/** A binary XML document. Attribute names with a resId come first in the pool, as aapt orders them. */
export function encodeAxml(root: EncElement, options: { utf8?: boolean } = {}): Buffer {
  const withIds: EncAttr[] = [];
  const walk = (e: EncElement): void => {
    for (const a of e.attrs ?? []) if (a.resId && !withIds.some((w) => w.name === a.name && w.resId === a.resId)) withIds.push(a);
    for (const c of e.children ?? []) walk(c);
  };
  walk(root);
  const pool: string[] = withIds.map((a) => a.name);
  const index = (s: string | null | undefined): number => {
    if (s === null || s === undefined) return NONE;
    let i = pool.indexOf(s);
    if (i < 0) { pool.push(s); i = pool.length - 1; }
    return i;
  };
  const nodes: Buffer[] = [];
  const emit = (e: EncElement): void => {
    const attrs = (e.attrs ?? []).map((a) => {
      const nameIndex = a.resId ? withIds.findIndex((w) => w.name === a.name && w.resId === a.resId) : index(a.name);
      const data = a.type === 0x03 ? index(a.string ?? '') : (a.data ?? 0);
      return Buffer.concat([u32(index(a.ns)), u32(nameIndex), u32(a.raw === undefined ? (a.type === 0x03 ? data : NONE) : index(a.raw)), u16(8), Buffer.from([0, a.type]), u32(data)]);
    });
    const ext = Buffer.concat([u32(index(e.ns)), u32(index(e.name)), u16(20), u16(20), u16(attrs.length), u16(0), u16(0), u16(0)]);
    nodes.push(chunk(0x0102, Buffer.concat([u32(1), u32(NONE)]), Buffer.concat([ext, ...attrs])));
    for (const c of e.children ?? []) emit(c);
    nodes.push(chunk(0x0103, Buffer.concat([u32(1), u32(NONE)]), Buffer.concat([u32(index(e.ns)), u32(index(e.name))])));
  };
  emit(root);
  const resMap = chunk(0x0180, Buffer.alloc(0), Buffer.concat(withIds.map((a) => u32(a.resId!))));
  const body = Buffer.concat([encodeStringPool(pool, options.utf8 ?? false), resMap, ...nodes]);
  return chunk(0x0003, Buffer.alloc(0), body);
}

export interface EncConfig {
  language?: string;
  region?: string;
  density?: number;
  sdkVersion?: number;
  /** Sets uiMode night (a qualifier other than locale/density/sdk). */
  night?: boolean;
}

export interface EncEntry {
  key: string;
  type: number;
  data?: number;
  /** For TYPE_STRING: the string, stored in the global pool. */
  string?: string;
  /** A complex (bag) entry with no maps. */
  complex?: boolean;
}

export interface EncType {
  id: number;
  config?: EncConfig;
  layout?: 'offset32' | 'offset16' | 'sparse';
  compact?: boolean;
  /** Entry index → entry; holes are absent entries. */
  entries: (EncEntry | null)[];
}

export interface EncPackage {
  id: number;
  name: string;
  typeNames: string[];
  types: EncType[];
}

/** ResTable_config::packLanguageOrRegion: 2 letters as-is, 3 letters packed into 15 bits. */
function packLocalePart(value: string | undefined, base: number): Buffer {
  if (value === undefined || value === '') return Buffer.alloc(2);
  if (value.length === 2) return Buffer.from(value, 'latin1');
  const [a, b, c] = [...value].map((ch) => ch.charCodeAt(0) - base) as [number, number, number];
  return Buffer.from([0x80 | (c << 2) | (b >> 3), ((b & 0x07) << 5) | a]);
}

function encodeConfig(c: EncConfig = {}): Buffer {
  const config = Buffer.alloc(64);
  config.writeUInt32LE(64, 0);
  packLocalePart(c.language, 0x61).copy(config, 8);
  packLocalePart(c.region, 0x30).copy(config, 10);
  config.writeUInt16LE(c.density ?? 0, 14);
  config.writeUInt16LE(c.sdkVersion ?? 0, 24);
  if (c.night === true) config[29] = 0x20;
  return config;
}

/** resources.arsc with one global pool and the given packages. */
export function encodeArsc(packages: EncPackage[], options: { utf8?: boolean } = {}): Buffer {
  const utf8 = options.utf8 ?? true;
  const globals: string[] = [];
  const gIndex = (s: string): number => { let i = globals.indexOf(s); if (i < 0) { globals.push(s); i = globals.length - 1; } return i; };
  const pkgChunks = packages.map((p) => {
    const keys: string[] = [];
    const kIndex = (s: string): number => { let i = keys.indexOf(s); if (i < 0) { keys.push(s); i = keys.length - 1; } return i; };
    const typeChunks = p.types.map((t) => {
      const layout = t.layout ?? 'offset32';
      const entryBufs: Buffer[] = [];
      const slots: { index: number; offset: number }[] = [];
      let at = 0;
      t.entries.forEach((e, index) => {
        if (e === null) return;
        const data = e.type === 0x03 ? gIndex(e.string ?? '') : (e.data ?? 0);
        let buf: Buffer;
        if (t.compact === true && e.complex !== true) {
          buf = Buffer.concat([u16(kIndex(e.key)), u16(0x0008 | (e.type << 8)), u32(data)]);
        } else if (e.complex === true) {
          buf = Buffer.concat([u16(16), u16(0x0001), u32(kIndex(e.key)), u32(0), u32(0)]);
        } else {
          buf = Buffer.concat([u16(8), u16(0), u32(kIndex(e.key)), u16(8), Buffer.from([0, e.type]), u32(data)]);
        }
        slots.push({ index, offset: at });
        entryBufs.push(buf);
        at += buf.length;
      });
      const config = encodeConfig(t.config);
      let offsets: Buffer;
      let entryCount: number;
      if (layout === 'sparse') {
        entryCount = slots.length;
        offsets = Buffer.concat(slots.map((s) => Buffer.concat([u16(s.index), u16(s.offset / 4)])));
      } else {
        entryCount = t.entries.length;
        const parts: Buffer[] = [];
        for (let i = 0; i < entryCount; i++) {
          const slot = slots.find((s) => s.index === i);
          parts.push(layout === 'offset16' ? u16(slot === undefined ? 0xffff : slot.offset / 4) : u32(slot === undefined ? NONE : slot.offset));
        }
        offsets = pad4(Buffer.concat(parts));
      }
      const flags = layout === 'sparse' ? 0x01 : layout === 'offset16' ? 0x02 : 0;
      const headerSize = 20 + config.length;
      const header = Buffer.concat([Buffer.from([t.id, flags]), u16(0), u32(entryCount), u32(headerSize + offsets.length), config]);
      return chunk(0x0201, header, Buffer.concat([offsets, ...entryBufs]));
    });
    const typePool = encodeStringPool(p.typeNames, utf8);
    const keyPool = encodeStringPool(keys, utf8);
    const name = Buffer.alloc(256);
    name.write(p.name, 'utf16le');
    const headerSize = 288;
    const header = Buffer.concat([u32(p.id), name, u32(headerSize), u32(0), u32(headerSize + typePool.length), u32(0), u32(0)]);
    return chunk(0x0200, header, Buffer.concat([typePool, keyPool, ...typeChunks]));
  });
  return chunk(0x0002, u32(packages.length), Buffer.concat([encodeStringPool(globals, utf8), ...pkgChunks]));
}
