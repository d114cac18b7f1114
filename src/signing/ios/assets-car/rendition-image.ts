// A bitmap rendition's pixels as a standard PNG (SPECIFICATION.md §3.6–§3.8): unwrap the
// rendition data ('CELM' pixel data, optionally in 'KCBC' row chunks, or 'DWAR' raw file bytes),
// decompress it (zlib, LZVN, LZFSE or none) and convert CoreUI's premultiplied pixel formats to
// straight RGBA. Sizes are checked before anything is allocated.
import { inflateRawSync, inflateSync } from 'node:zlib';
import { SigningError } from '../../errors.ts';
import { encodeRgbaPng, PNG_SIGNATURE } from '../../png/index.ts';
import type { CsiHeader } from './car.ts';
import { lzfseDecode } from './lzfse.ts';
import { lzvnDecodeInto } from './lzvn.ts';

/** App icons are 1024×1024 at most; twice that in each direction bounds every decode. */
export const MAX_IMAGE_SIDE = 2048;
const MAX_CHUNKS = 4096;

/** §3.7 CELM compression types (CoreUI's rendition compression identifiers). */
export const COMPRESSION = { none: 0, rle: 1, zlib: 2, lzvn: 3, lzfse: 4, jpegLzfse: 5, blurred: 6, astc: 7, palette: 8, hevc: 9, deepmapLzfse: 10, deepmap2: 11 } as const;
const COMPRESSION_NAMES = Object.fromEntries(Object.entries(COMPRESSION).map(([name, id]) => [id, name]));

/** §3.8 bytes per pixel of the pixel formats we convert. */
const BYTES_PER_PIXEL: Record<string, number> = { ARGB: 4, 'GA8 ': 2, RGBW: 8 };
/** §3.5 TLV property holding the row stride in bytes. */
const PROPERTY_BYTES_PER_ROW = 1007;

function invalid(message: string): SigningError {
  return new SigningError('asset_catalog_invalid', `Assets.car rendition: ${message}`);
}
function unsupported(message: string): SigningError {
  return new SigningError('asset_catalog_unsupported', `Assets.car rendition: ${message}`);
}

/** A standard PNG of the rendition, or an error saying why it cannot be produced. */
export function renditionPng(csi: CsiHeader): Buffer {
  const tag = csi.data.toString('latin1', 0, 4);
  if (tag === 'DWAR') return rawDataPng(csi.data);
  checkRenditionEncoding(csi);
  const bpp = BYTES_PER_PIXEL[csi.pixelFormat]!;
  const { width, height } = csi;
  if (width === 0 || height === 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) throw invalid(`implausible size ${width}×${height}`);
  const strideProperty = csi.properties.get(PROPERTY_BYTES_PER_ROW);
  const stride = strideProperty !== undefined && strideProperty.length >= 4 ? strideProperty.readUInt32LE(0) : width * bpp;
  // Rows may be padded, but only a little (real catalogs align rows to at most 256 bytes).
  if (stride < width * bpp || stride > width * bpp + 256) throw invalid(`row stride ${stride} does not fit ${width} pixels of ${bpp} bytes`);
  const pixels = celmPixels(csi.data, stride, height);
  return encodeRgbaPng(toRgba(pixels, csi.pixelFormat, width, height, stride), width, height);
}

/** Throws what renditionPng would for an unsupported kind, format or compression, without decoding. */
export function checkRenditionEncoding(csi: CsiHeader): void {
  const tag = csi.data.toString('latin1', 0, 4);
  if (tag === 'DWAR') {
    if (csi.data.length < 20 || !csi.data.subarray(12, 20).equals(PNG_SIGNATURE)) throw unsupported('raw data is not a PNG file (JPEG, PDF or other data)');
    return;
  }
  if (tag !== 'MLEC' || csi.data.length < 16) throw unsupported(`data kind "${tag.replace(/[^\x20-\x7e]/g, '?')}" (${csi.pixelFormat}) is not a bitmap`);
  if (BYTES_PER_PIXEL[csi.pixelFormat] === undefined) throw unsupported(`pixel format "${csi.pixelFormat}" is not supported`);
  const compression = csi.data.readUInt32LE(8);
  if (![COMPRESSION.none, COMPRESSION.zlib, COMPRESSION.lzvn, COMPRESSION.lzfse].includes(compression as 0)) {
    throw unsupported(`compression ${COMPRESSION_NAMES[compression] ?? compression} is not supported`);
  }
}

// §3.6 'DWAR' (RAWD): u32 tag, u32 version, u32 length, then the bytes of an image file.
function rawDataPng(data: Buffer): Buffer {
  if (data.length < 12) throw invalid('raw data header is truncated');
  const length = data.readUInt32LE(8);
  if (length > data.length - 12) throw invalid('raw data runs past the rendition');
  const file = data.subarray(12, 12 + length);
  if (file.length >= 8 && file.subarray(0, 8).equals(PNG_SIGNATURE)) return Buffer.from(file);
  throw unsupported('raw data is not a PNG file (JPEG, PDF or other data)');
}

// §3.7 'CELM': u32 tag, u32 flags, u32 compression, u32 length (or, with flag bit 0, a chunk
// count followed by 'KCBC' chunks of {tag, u32, u32, u32 rows, u32 length, bytes}).
function celmPixels(data: Buffer, stride: number, height: number): Buffer {
  if (data.length < 16) throw invalid('CELM header is truncated');
  const flags = data.readUInt32LE(4);
  const compression = data.readUInt32LE(8);
  const expected = stride * height;
  if ((flags & 1) === 0) {
    const length = data.readUInt32LE(12);
    if (length > data.length - 16) throw invalid('CELM payload runs past the rendition');
    return decompress(data.subarray(16, 16 + length), compression, expected);
  }
  const count = data.readUInt32LE(12);
  if (count === 0 || count > MAX_CHUNKS || count > height) throw invalid(`CELM declares ${count} chunks for ${height} rows`);
  const out = Buffer.alloc(expected);
  let at = 16;
  let row = 0;
  for (let i = 0; i < count; i++) {
    if (at + 20 > data.length || data.toString('latin1', at, at + 4) !== 'KCBC') throw invalid(`chunk ${i} has no KCBC header`);
    const rows = data.readUInt32LE(at + 12);
    const length = data.readUInt32LE(at + 16);
    if (rows > height - row) throw invalid(`chunk ${i} has more rows than the image`);
    if (length > data.length - at - 20) throw invalid(`chunk ${i} runs past the rendition`);
    decompress(data.subarray(at + 20, at + 20 + length), compression, rows * stride).copy(out, row * stride);
    row += rows;
    at += 20 + length;
  }
  if (row !== height) throw invalid(`chunks hold ${row} of ${height} rows`);
  return out;
}

function decompress(payload: Buffer, compression: number, expected: number): Buffer {
  switch (compression) {
    case COMPRESSION.none:
      if (payload.length < expected) throw invalid(`uncompressed pixels have ${payload.length} bytes, expected ${expected}`);
      return payload.subarray(0, expected);
    case COMPRESSION.zlib: {
      let out: Buffer;
      try {
        // zlib-wrapped (0x78 …) or a bare deflate stream; either way no more than `expected`.
        out = (payload[0]! & 0x0f) === 8 && ((payload[0]! << 8) | payload[1]!) % 31 === 0
          ? inflateSync(payload, { maxOutputLength: expected })
          : inflateRawSync(payload, { maxOutputLength: expected });
      } catch (error) {
        throw new SigningError('asset_catalog_invalid', 'Assets.car rendition: zlib pixel data does not inflate', { cause: error });
      }
      if (out.length !== expected) throw invalid(`zlib pixel data has ${out.length} bytes, expected ${expected}`);
      return out;
    }
    case COMPRESSION.lzvn: {
      // A bare LZVN stream, or LZVN inside LZFSE block framing ("bvxn").
      if (payload.toString('latin1', 0, 3) === 'bvx') return lzfseDecode(payload, expected);
      const out = Buffer.alloc(expected);
      lzvnDecodeInto(payload, 0, payload.length, out, 0, expected);
      return out;
    }
    case COMPRESSION.lzfse:
      return lzfseDecode(payload, expected);
    default:
      throw unsupported(`compression ${COMPRESSION_NAMES[compression] ?? compression} is not supported`);
  }
}

// §3.8 pixel formats → straight 8-bit RGBA:
//   'ARGB' 8-bit premultiplied, bytes B G R A (little-endian ARGB words);
//   'GA8 ' 8-bit premultiplied gray + alpha;
//   'RGBW' IEEE half floats R G B A, premultiplied, gamma-encoded extended-range sRGB (values
//          outside 0–1 carry Display P3 colours; we clamp them to sRGB).
function toRgba(pixels: Buffer, format: string, width: number, height: number, stride: number): Buffer {
  const out = Buffer.alloc(width * height * 4);
  const halves = format === 'RGBW' ? halfTable() : null;
  for (let y = 0; y < height; y++) {
    let i = y * stride;
    let o = y * width * 4;
    for (let x = 0; x < width; x++, o += 4) {
      if (format === 'ARGB') {
        const a = pixels[i + 3]!;
        out[o] = unpremultiply8(pixels[i + 2]!, a);
        out[o + 1] = unpremultiply8(pixels[i + 1]!, a);
        out[o + 2] = unpremultiply8(pixels[i]!, a);
        out[o + 3] = a;
        i += 4;
      } else if (format === 'GA8 ') {
        const a = pixels[i + 1]!;
        out[o] = out[o + 1] = out[o + 2] = unpremultiply8(pixels[i]!, a);
        out[o + 3] = a;
        i += 2;
      } else {
        const a = clamp01(halves![pixels.readUInt16LE(i + 6)]!);
        for (let c = 0; c < 3; c++) {
          // Gamma-encoded extended-range values: clamp to the sRGB gamut and the 0–1 range.
          const straight = a === 0 ? 0 : halves![pixels.readUInt16LE(i + 2 * c)]! / a;
          out[o + c] = Math.round(clamp01(straight) * 255);
        }
        out[o + 3] = Math.round(a * 255);
        i += 8;
      }
    }
  }
  return out;
}

function unpremultiply8(value: number, alpha: number): number {
  return alpha === 0 ? 0 : alpha === 255 ? value : Math.min(255, Math.round((value * 255) / alpha));
}

let halfValues: Float32Array | null = null;
/** Every IEEE binary16 value, computed once (65,536 entries). */
function halfTable(): Float32Array {
  if (halfValues === null) {
    halfValues = new Float32Array(65536);
    for (let bits = 0; bits < 65536; bits++) halfValues[bits] = half(bits);
  }
  return halfValues;
}

function clamp01(v: number): number {
  return Number.isNaN(v) ? 0 : v < 0 ? 0 : v > 1 ? 1 : v;
}

/** IEEE 754 binary16 → number. */
function half(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}
