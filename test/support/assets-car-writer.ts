// A small compiled-asset-catalog (Assets.car) writer for tests, built from
// src/signing/ios/assets-car/SPECIFICATION.md: a BOM store with CARHEADER, KEYFORMAT,
// APPEARANCEKEYS, FACETKEYS and RENDITIONS (one-leaf trees), and renditions whose pixel data is
// stored with any of the compressions the reader supports. Its LZVN encoder emits literals plus
// 4-byte-distance matches (enough to exercise both opcode families), and its LZFSE output uses
// stored ('bvx-') and LZVN ('bvxn') blocks; real FSE-coded ('bvx2') data comes from the public
// catalogs in ../shared/fixtures.
import { deflateSync } from 'node:zlib';

export type Compression = 'none' | 'zlib' | 'lzvn' | 'lzfse' | 'deepmap2';

export interface TestRendition {
  facet: string;
  width: number;
  height: number;
  /** Straight RGBA pixels (width × height × 4), or a PNG file for `raw-png`. */
  rgba?: Buffer;
  png?: Buffer;
  kind?: 'bitmap' | 'raw-png' | 'multisize-set';
  pixelFormat?: 'ARGB' | 'RGBW';
  compression?: Compression;
  /** Rows per KCBC chunk; omitted = one unchunked payload. */
  chunkRows?: number;
  idiom?: number;
  scale?: number;
  appearance?: number;
  gamut?: number;
  name?: string;
}

/** The key format the writer uses (attribute identifiers, §3.3). */
const KEY_FORMAT = [7, 12, 15, 16, 9, 24, 17, 1, 2];

export function buildAssetCatalog(renditions: readonly TestRendition[], options: { appearances?: Record<string, number> } = {}): Buffer {
  const blocks: Buffer[] = [Buffer.alloc(0)]; // block 0 is the null block
  const add = (b: Buffer): number => blocks.push(b) - 1;
  const vars: Array<[string, number]> = [];

  const header = Buffer.alloc(436);
  header.write('RATC', 0, 'latin1');
  header.writeUInt32LE(918, 4);
  header.writeUInt32LE(17, 8);
  header.writeUInt32LE(renditions.length, 16);
  header.write('@(#)PROGRAM:CoreUI  PROJECT:CoreUI-918.3\n', 20, 'latin1');
  header.write('signet test writer', 148, 'latin1');
  vars.push(['CARHEADER', add(header)]);

  const keyFormat = Buffer.alloc(12 + KEY_FORMAT.length * 4);
  keyFormat.write('tmfk', 0, 'latin1');
  keyFormat.writeUInt32LE(KEY_FORMAT.length, 8);
  KEY_FORMAT.forEach((a, i) => keyFormat.writeUInt32LE(a, 12 + i * 4));
  vars.push(['KEYFORMAT', add(keyFormat)]);

  const ids = new Map<string, number>();
  for (const r of renditions) if (!ids.has(r.facet)) ids.set(r.facet, 1000 + ids.size * 7);
  const facetEntries = [...ids].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, id]): [Buffer, Buffer] => {
    const value = Buffer.alloc(6 + 3 * 4);
    value.writeUInt16LE(3, 4);
    [[1, 85], [2, 220], [17, id]].forEach(([a, v], i) => { value.writeUInt16LE(a!, 6 + i * 4); value.writeUInt16LE(v!, 8 + i * 4); });
    return [Buffer.from(name, 'utf8'), value];
  });
  vars.push(['FACETKEYS', add(tree(add, facetEntries))]);

  const appearanceEntries = Object.entries(options.appearances ?? {}).map(([name, id]): [Buffer, Buffer] => {
    const v = Buffer.alloc(2);
    v.writeUInt16LE(id, 0);
    return [Buffer.from(name, 'utf8'), v];
  });
  if (appearanceEntries.length > 0) vars.push(['APPEARANCEKEYS', add(tree(add, appearanceEntries))]);

  const renditionEntries = renditions.map((r): [Buffer, Buffer] => {
    const values: Record<number, number> = { 7: r.appearance ?? 0, 12: Math.round((r.scale ?? 1) * 1), 15: r.idiom ?? 1, 16: 0, 9: r.kind === 'multisize-set' ? 0 : 1, 24: r.gamut ?? 0, 17: ids.get(r.facet)!, 1: 85, 2: r.kind === 'multisize-set' ? 218 : 220 };
    const key = Buffer.alloc(KEY_FORMAT.length * 2);
    KEY_FORMAT.forEach((a, i) => key.writeUInt16LE(values[a]!, i * 2));
    return [key, csi(r)];
  });
  vars.push(['RENDITIONS', add(tree(add, renditionEntries))]);
  return bomStore(blocks, vars);
}

/** A CSI header, its TLV properties and the rendition data (§3.5–§3.7). */
export function csi(r: TestRendition): Buffer {
  const kind = r.kind ?? 'bitmap';
  const format = kind === 'bitmap' ? (r.pixelFormat ?? 'ARGB') : kind === 'raw-png' ? 'DATA' : '\0\0\0\0';
  const bpp = format === 'RGBW' ? 8 : 4;
  let data: Buffer;
  if (kind === 'multisize-set') data = Buffer.concat([Buffer.from('SISM', 'latin1'), Buffer.alloc(20)]);
  else if (kind === 'raw-png') data = Buffer.concat([Buffer.from('DWAR', 'latin1'), u32(0), u32(r.png!.length), r.png!]);
  else data = celm(r.compression ?? 'lzfse', premultiplied(r.rgba!, format), r.width * bpp, r.height, r.chunkRows);
  const properties = Buffer.concat([tlv(1006, u32(1)), ...(kind === 'bitmap' ? [tlv(1007, u32(r.width * bpp))] : [])]);
  const header = Buffer.alloc(184);
  header.write('ISTC', 0, 'latin1');
  header.writeUInt32LE(1, 4);
  header.writeUInt32LE(kind === 'multisize-set' ? 0 : r.width, 12);
  header.writeUInt32LE(kind === 'multisize-set' ? 0 : r.height, 16);
  header.writeUInt32LE(Math.round((r.scale ?? 1) * 100), 20);
  Buffer.from(format, 'latin1').reverse().copy(header, 24);
  header.writeUInt16LE(kind === 'multisize-set' ? 1010 : 12, 36); // images stored as files keep an image layout
  header.write(r.name ?? `${r.facet}.png`, 40, 'utf8');
  header.writeUInt32LE(properties.length, 168);
  header.writeUInt32LE(data.length, 180);
  return Buffer.concat([header, properties, data]);
}

function celm(compression: Compression, pixels: Buffer, stride: number, height: number, chunkRows?: number): Buffer {
  const id = { none: 0, zlib: 2, lzvn: 3, lzfse: 4, deepmap2: 11 }[compression];
  const pack = (raw: Buffer): Buffer => (compression === 'none' ? raw : compression === 'zlib' ? deflateSync(raw)
    : compression === 'lzvn' ? lzvnEncode(raw) : compression === 'lzfse' ? lzfseEncode(raw) : Buffer.from('dmp2', 'latin1'));
  if (chunkRows === undefined) {
    const payload = pack(pixels);
    return Buffer.concat([Buffer.from('MLEC', 'latin1'), u32(0), u32(id), u32(payload.length), payload]);
  }
  const chunks: Buffer[] = [];
  for (let row = 0; row < height; row += chunkRows) {
    const rows = Math.min(chunkRows, height - row);
    const payload = pack(pixels.subarray(row * stride, (row + rows) * stride));
    chunks.push(Buffer.from('KCBC', 'latin1'), u32(0), u32(0), u32(rows), u32(payload.length), payload);
  }
  return Buffer.concat([Buffer.from('MLEC', 'latin1'), u32(1), u32(id), u32(Math.ceil(height / chunkRows)), ...chunks]);
}

/** Straight RGBA → CoreUI pixels: premultiplied BGRA bytes ('ARGB') or half floats ('RGBW'). */
function premultiplied(rgba: Buffer, format: string): Buffer {
  const n = rgba.length / 4;
  const out = Buffer.alloc(n * (format === 'RGBW' ? 8 : 4));
  for (let i = 0; i < n; i++) {
    const [r, g, b, a] = [rgba[i * 4]!, rgba[i * 4 + 1]!, rgba[i * 4 + 2]!, rgba[i * 4 + 3]!];
    if (format === 'RGBW') {
      [r, g, b].forEach((c, k) => out.writeUInt16LE(toHalf((c / 255) * (a / 255)), i * 8 + k * 2));
      out.writeUInt16LE(toHalf(a / 255), i * 8 + 6);
    } else {
      out[i * 4] = Math.round((b * a) / 255);
      out[i * 4 + 1] = Math.round((g * a) / 255);
      out[i * 4 + 2] = Math.round((r * a) / 255);
      out[i * 4 + 3] = a;
    }
  }
  return out;
}

/** number in [0, 1] → IEEE binary16, round to nearest. */
function toHalf(v: number): number {
  if (v < 2 ** -14) return Math.round(v / 2 ** -24); // zero and subnormals
  const exponent = Math.floor(Math.log2(v));
  const fraction = Math.round((v / 2 ** exponent - 1) * 1024);
  return fraction === 1024 ? ((exponent + 16) << 10) : ((exponent + 15) << 10) | fraction;
}

/** LZVN (§5): literal runs (sml_l / lrg_l) and, where 3+ bytes repeat 4 back, lrg_d matches. */
export function lzvnEncode(raw: Buffer): Buffer {
  const out: number[] = [];
  let literalStart = 0;
  const flushLiterals = (end: number): void => {
    for (let at = literalStart; at < end;) {
      const n = Math.min(end - at, 271);
      if (n < 16) out.push(0xe0 | n);
      else out.push(0xe0, n - 16);
      for (let k = 0; k < n; k++) out.push(raw[at + k]!);
      at += n;
    }
  };
  let i = 0;
  while (i < raw.length) {
    let m = 0;
    while (i >= 4 && m < 10 && i + m < raw.length && raw[i + m] === raw[i + m - 4]) m++;
    if (m >= 3) {
      flushLiterals(i);
      out.push(((m - 3) << 3) | 7, 4, 0); // lrg_d, L = 0, D = 4
      i += m;
      literalStart = i;
    } else i++;
  }
  flushLiterals(raw.length);
  out.push(0x06, 0, 0, 0, 0, 0, 0, 0); // eos
  return Buffer.from(out);
}

/** LZFSE framing (§4.1): a stored block for the first half, an LZVN block for the rest. */
export function lzfseEncode(raw: Buffer): Buffer {
  const half = raw.length >> 1;
  const vn = lzvnEncode(raw.subarray(half));
  return Buffer.concat([
    Buffer.from('bvx-', 'latin1'), u32(half), raw.subarray(0, half),
    Buffer.from('bvxn', 'latin1'), u32(raw.length - half), u32(vn.length), vn,
    Buffer.from('bvx$', 'latin1'),
  ]);
}

/** A one-leaf BOM tree (§2.4): the 'tree' block and a leaf paths block. */
function tree(add: (b: Buffer) => number, entries: Array<[Buffer, Buffer]>): Buffer {
  const paths = Buffer.alloc(12 + entries.length * 8);
  paths.writeUInt16BE(1, 0);
  paths.writeUInt16BE(entries.length, 2);
  entries.forEach(([key, value], i) => {
    paths.writeUInt32BE(add(value), 12 + i * 8);
    paths.writeUInt32BE(add(key), 16 + i * 8);
  });
  const t = Buffer.alloc(21);
  t.write('tree', 0, 'latin1');
  t.writeUInt32BE(1, 4);
  t.writeUInt32BE(add(paths), 8);
  t.writeUInt32BE(4096, 12);
  t.writeUInt32BE(entries.length, 16);
  return t;
}

/** The BOM store (§2.1–§2.3): 512-byte header, blocks, block index, variables. */
function bomStore(blocks: Buffer[], vars: Array<[string, number]>): Buffer {
  const parts: Buffer[] = [Buffer.alloc(512)];
  let offset = 512;
  const index = Buffer.alloc(4 + blocks.length * 8);
  index.writeUInt32BE(blocks.length, 0);
  blocks.forEach((b, i) => {
    if (i > 0) {
      index.writeUInt32BE(offset, 4 + i * 8);
      index.writeUInt32BE(b.length, 8 + i * 8);
      parts.push(b);
      offset += b.length;
    }
  });
  const varTable = Buffer.concat([u32be(vars.length), ...vars.map(([name, block]) => Buffer.concat([u32be(block), Buffer.from([name.length]), Buffer.from(name, 'latin1')]))]);
  const header = parts[0]!;
  header.write('BOMStore', 0, 'latin1');
  header.writeUInt32BE(1, 8);
  header.writeUInt32BE(blocks.length - 1, 12);
  header.writeUInt32BE(offset, 16);
  header.writeUInt32BE(index.length, 20);
  header.writeUInt32BE(offset + index.length, 24);
  header.writeUInt32BE(varTable.length, 28);
  return Buffer.concat([...parts, index, varTable]);
}

function tlv(type: number, data: Buffer): Buffer {
  return Buffer.concat([u32(type), u32(data.length), data]);
}
function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v, 0);
  return b;
}
function u32be(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v, 0);
  return b;
}
