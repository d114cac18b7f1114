// Compiled asset catalog (CoreUI "car") reader (SPECIFICATION.md §3): the catalog header, the key
// format, the facet (asset name) table and the rendition table with each rendition's CSI header.
// CAR structures are little-endian (the BOM around them is big-endian). Pixel data is decoded
// on demand by rendition-image.ts.
import { bomError, bomTree, bomVar, parseBom } from './bom.ts';

/** §3.3 rendition key attributes (CoreUI's rendition attribute identifiers) that we use. */
export const ATTR = {
  appearance: 7,
  dimension1: 8,
  dimension2: 9,
  scale: 12,
  idiom: 15,
  subtype: 16,
  identifier: 17,
  element: 1,
  part: 2,
  gamut: 24,
} as const;

/** §3.3 idiom values. */
export const IDIOM = { universal: 0, phone: 1, pad: 2, tv: 3, car: 4, watch: 5, marketing: 6 } as const;

/** Catalogs hold at most tens of thousands of renditions; these bounds are far above that. */
const MAX_RENDITIONS = 200_000;
const MAX_FACETS = 100_000;
const MAX_KEY_ATTRIBUTES = 64;
const CSI_HEADER_SIZE = 184;

export interface CarHeader {
  readonly coreUiVersion: number;
  readonly storageVersion: number;
  readonly renditionCount: number;
  readonly mainVersion: string;
  readonly version: string;
  readonly schemaVersion: number;
  readonly colorSpaceId: number;
}

/** §3.5 the CSI ("ISTC") header of a rendition, its TLV properties and its data. */
export interface CsiHeader {
  readonly version: number;
  readonly flags: number;
  readonly width: number;
  readonly height: number;
  /** Scale × 100 (200 = @2x). */
  readonly scale: number;
  /** Four-character pixel format: 'ARGB', 'GA8 ', 'RGBW', 'PDF ', 'DATA', 'JPEG', … */
  readonly pixelFormat: string;
  readonly colorSpace: number;
  readonly layout: number;
  readonly name: string;
  readonly properties: ReadonlyMap<number, Buffer>;
  readonly data: Buffer;
}

export interface Rendition {
  /** Key attribute identifier → value. */
  readonly key: ReadonlyMap<number, number>;
  /** The facet (asset) name, when the FACETKEYS table names this rendition's identifier. */
  readonly facet: string | null;
  readonly csi: CsiHeader;
}

export interface AssetCatalog {
  readonly header: CarHeader;
  readonly keyFormat: readonly number[];
  /** Facet name → its identifier attribute value. */
  readonly facets: ReadonlyMap<string, number>;
  /** Appearance name (e.g. "UIAppearanceDark") → appearance attribute value. */
  readonly appearances: ReadonlyMap<string, number>;
  readonly renditions: readonly Rendition[];
}

export function parseAssetCatalog(bytes: Buffer): AssetCatalog {
  const store = parseBom(bytes);
  const header = parseCarHeader(bomVar(store, 'CARHEADER'));
  const keyFormat = parseKeyFormat(bomVar(store, 'KEYFORMAT'));

  // §3.4 FACETKEYS: key = the asset name, value = cursor hot spot (2 × u16), u16 count,
  // count × {u16 attribute, u16 value}; the identifier attribute links to renditions.
  const facets = new Map<string, number>();
  const byIdentifier = new Map<number, string>();
  for (const { key, value } of bomTree(store, 'FACETKEYS', MAX_FACETS)) {
    if (value.length < 6) throw bomError('facet entry is truncated');
    const count = value.readUInt16LE(4);
    if (6 + count * 4 > value.length) throw bomError('facet entry declares more attributes than it holds');
    const name = key.toString('utf8');
    for (let i = 0; i < count; i++) {
      if (value.readUInt16LE(6 + i * 4) === ATTR.identifier) {
        const id = value.readUInt16LE(8 + i * 4);
        facets.set(name, id);
        if (!byIdentifier.has(id)) byIdentifier.set(id, name);
      }
    }
  }

  // §3.4 APPEARANCEKEYS (Xcode 11+): key = appearance name, value = u16 appearance id.
  const appearances = new Map<string, number>();
  if (store.vars.has('APPEARANCEKEYS')) {
    for (const { key, value } of bomTree(store, 'APPEARANCEKEYS', 1024)) {
      if (value.length >= 2) appearances.set(key.toString('utf8'), value.readUInt16LE(0));
    }
  }

  // §3.4 RENDITIONS: key = one u16 per key-format attribute, value = CSI header + data.
  const renditions: Rendition[] = [];
  for (const { key, value } of bomTree(store, 'RENDITIONS', MAX_RENDITIONS)) {
    if (key.length < keyFormat.length * 2) throw bomError(`rendition key has ${key.length} bytes for ${keyFormat.length} attributes`);
    const attributes = new Map<number, number>();
    keyFormat.forEach((attribute, i) => attributes.set(attribute, key.readUInt16LE(i * 2)));
    const identifier = attributes.get(ATTR.identifier);
    renditions.push({ key: attributes, facet: identifier === undefined ? null : (byIdentifier.get(identifier) ?? null), csi: parseCsiHeader(value) });
  }
  return { header, keyFormat, facets, appearances, renditions };
}

// §3.1 CARHEADER: 'RATC', u32 coreuiVersion, storageVersion, storageTimestamp, renditionCount,
// char[128] mainVersionString, char[256] versionString, uuid[16], u32 associatedChecksum,
// schemaVersion, colorSpaceID, keySemantics (436 bytes).
function parseCarHeader(block: Buffer | null): CarHeader {
  if (block === null) throw bomError('has no CARHEADER');
  if (block.length < 436 || block.toString('latin1', 0, 4) !== 'RATC') throw bomError('CARHEADER is not a CoreUI header ("RATC")');
  return {
    coreUiVersion: block.readUInt32LE(4),
    storageVersion: block.readUInt32LE(8),
    renditionCount: block.readUInt32LE(16),
    mainVersion: cString(block, 20, 128),
    version: cString(block, 148, 256),
    schemaVersion: block.readUInt32LE(424),
    colorSpaceId: block.readUInt32LE(428),
  };
}

// §3.2 KEYFORMAT: 'tmfk', u32 version, u32 count, count × u32 attribute identifier.
function parseKeyFormat(block: Buffer | null): number[] {
  if (block === null) throw bomError('has no KEYFORMAT');
  if (block.length < 12 || block.toString('latin1', 0, 4) !== 'tmfk') throw bomError('KEYFORMAT is malformed');
  const count = block.readUInt32LE(8);
  if (count > MAX_KEY_ATTRIBUTES || 12 + count * 4 > block.length) throw bomError(`KEYFORMAT declares ${count} attributes`);
  return Array.from({ length: count }, (_, i) => block.readUInt32LE(12 + i * 4));
}

// §3.5 CSI header: 'ISTC', u32 version, u32 flags, u32 width, u32 height, u32 scale×100,
// u32 pixel format, u32 colour space; csimetadata {u32 modtime, u16 layout, u16 zero,
// char[128] name}; csibitmaplist {u32 tlvLength, u32, u32, u32 renditionLength}; then
// tlvLength bytes of {u32 type, u32 length, bytes} and renditionLength bytes of data.
export function parseCsiHeader(value: Buffer): CsiHeader {
  if (value.length < CSI_HEADER_SIZE || value.toString('latin1', 0, 4) !== 'ISTC') throw bomError('rendition has no CSI header ("ISTC")');
  const tlvLength = value.readUInt32LE(168);
  const dataLength = value.readUInt32LE(180);
  if (tlvLength > value.length - CSI_HEADER_SIZE) throw bomError('rendition properties run past the rendition');
  if (dataLength > value.length - CSI_HEADER_SIZE - tlvLength) throw bomError('rendition data runs past the rendition');
  const properties = new Map<number, Buffer>();
  const tlvEnd = CSI_HEADER_SIZE + tlvLength;
  for (let at = CSI_HEADER_SIZE; at + 8 <= tlvEnd;) {
    const type = value.readUInt32LE(at);
    const length = value.readUInt32LE(at + 4);
    if (length > tlvEnd - at - 8) throw bomError(`rendition property ${type} runs past the property list`);
    properties.set(type, value.subarray(at + 8, at + 8 + length));
    at += 8 + length;
  }
  return {
    version: value.readUInt32LE(4),
    flags: value.readUInt32LE(8),
    width: value.readUInt32LE(12),
    height: value.readUInt32LE(16),
    scale: value.readUInt32LE(20),
    // Four-character codes are stored as little-endian u32, so the bytes read backwards.
    pixelFormat: Buffer.from(value.subarray(24, 28)).reverse().toString('latin1'),
    colorSpace: value.readUInt32LE(28) & 0xf,
    layout: value.readUInt16LE(36),
    name: cString(value, 40, 128),
    properties,
    data: value.subarray(tlvEnd, tlvEnd + dataLength),
  };
}

function cString(bytes: Buffer, at: number, length: number): string {
  const field = bytes.subarray(at, at + length);
  const nul = field.indexOf(0);
  return field.toString('utf8', 0, nul < 0 ? field.length : nul);
}
