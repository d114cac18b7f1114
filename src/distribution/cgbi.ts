// Apple "CgBI" PNG → standard PNG. Hand-written: no npm package converts these, and the transform
// is small. Xcode's pngcrush rewrites app icons in a private variant that browsers cannot show:
//   - a `CgBI` chunk precedes IHDR;
//   - IDAT holds a raw deflate stream (no zlib header or Adler-32);
//   - pixels are BGRA with premultiplied alpha.
// We unfilter the scanlines, swap to RGBA, undo the premultiplication and write an ordinary PNG
// with the engines' PNG writer. Sources: the PNG spec (W3C REC-PNG, §9 filtering, §11 chunks) and
// the widely documented CgBI layout (e.g. pngdefry, iOS-PNG-Normalizer).
import { inflateRawSync } from 'node:zlib';
import { AppError } from '../errors.ts';
import { encodeRgbaPng, PNG_SIGNATURE as SIGNATURE } from '../signing/png/index.ts';

const MAX_PIXELS = 4096 * 4096; // app icons are 1024×1024 at most; refuse anything absurd

class IconError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('icon_invalid', message, options);
  }
}

interface Chunk {
  type: string;
  data: Buffer;
}

export function isPng(bytes: Buffer): boolean {
  return bytes.length > 8 && bytes.subarray(0, 8).equals(SIGNATURE);
}

export function isCgbiPng(bytes: Buffer): boolean {
  return isPng(bytes) && bytes.length >= 16 && bytes.toString('latin1', 12, 16) === 'CgBI';
}

/** Returns a standard PNG: the input itself when it is not CgBI, else the converted image. */
export function normalizePng(bytes: Buffer): Buffer {
  if (!isPng(bytes)) throw new IconError('not a PNG file');
  if (!isCgbiPng(bytes)) return bytes;
  const chunks = readChunks(bytes);
  const ihdr = chunks.find((c) => c.type === 'IHDR');
  if (!ihdr || ihdr.data.length !== 13) throw new IconError('PNG has no valid IHDR chunk');
  const width = ihdr.data.readUInt32BE(0);
  const height = ihdr.data.readUInt32BE(4);
  const [bitDepth, colorType, , , interlace] = ihdr.data.subarray(8, 13);
  // CgBI icons written by Xcode are 8-bit RGBA, non-interlaced; other shapes are not produced by it.
  if (bitDepth !== 8 || colorType !== 6 || interlace !== 0) {
    throw new IconError(`unsupported CgBI layout (bit depth ${bitDepth}, color type ${colorType}, interlace ${interlace})`);
  }
  if (width === 0 || height === 0 || width * height > MAX_PIXELS) throw new IconError(`implausible icon size ${width}×${height}`);

  const compressed = Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data));
  const stride = width * 4;
  const expected = (stride + 1) * height;
  let raw: Buffer;
  try {
    raw = inflateRawSync(compressed, { maxOutputLength: expected });
  } catch (error) {
    throw new IconError('CgBI image data does not inflate', { cause: error });
  }
  if (raw.length !== expected) throw new IconError(`CgBI image data has ${raw.length} bytes, expected ${expected}`);

  const pixels = unfilter(raw, width, height, 4);
  const rgba = Buffer.alloc(stride * height);
  for (let i = 0; i < rgba.length; i += 4) {
    const b = pixels[i]!, g = pixels[i + 1]!, r = pixels[i + 2]!, a = pixels[i + 3]!;
    // Undo premultiplied alpha; fully transparent pixels carry no colour.
    rgba[i] = a === 0 ? 0 : Math.min(255, Math.round((r * 255) / a));
    rgba[i + 1] = a === 0 ? 0 : Math.min(255, Math.round((g * 255) / a));
    rgba[i + 2] = a === 0 ? 0 : Math.min(255, Math.round((b * 255) / a));
    rgba[i + 3] = a;
  }
  const kept = chunks.filter((c) => !['CgBI', 'IHDR', 'IDAT', 'IEND'].includes(c.type) && isSafeToCopy(c.type));
  return encodeRgbaPng(rgba, width, height, kept);
}

/** Reads width and height of a standard or CgBI PNG. */
export function pngSize(bytes: Buffer): { width: number; height: number } {
  const ihdr = readChunks(bytes).find((c) => c.type === 'IHDR');
  if (!ihdr || ihdr.data.length !== 13) throw new IconError('PNG has no valid IHDR chunk');
  return { width: ihdr.data.readUInt32BE(0), height: ihdr.data.readUInt32BE(4) };
}

function readChunks(bytes: Buffer): Chunk[] {
  if (!isPng(bytes)) throw new IconError('not a PNG file');
  const chunks: Chunk[] = [];
  let offset = 8;
  while (offset + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    if (offset + 12 + length > bytes.length) throw new IconError(`PNG chunk ${type} runs past the end of the file`);
    chunks.push({ type, data: bytes.subarray(offset + 8, offset + 8 + length) });
    offset += 12 + length;
    if (type === 'IEND') return chunks;
  }
  throw new IconError('PNG ends without an IEND chunk');
}

// PNG §14.2: ancillary chunks whose 4th letter is lower case may be copied by editors that do not
// understand them. Colour-space chunks (gAMA, iCCP, sRGB…) describe the pixels we just rewrote,
// and stay valid because we changed only the channel order and premultiplication.
function isSafeToCopy(type: string): boolean {
  return /^[a-z]/.test(type) && (/[a-z]$/.test(type) || ['gAMA', 'cHRM', 'sRGB', 'iCCP'].includes(type));
}

// PNG §9.2: reverse the per-scanline filters (None, Sub, Up, Average, Paeth).
function unfilter(raw: Buffer, width: number, height: number, bpp: number): Buffer {
  const stride = width * bpp;
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const dst = y * stride;
    const prev = dst - stride;
    for (let x = 0; x < stride; x++) {
      const value = raw[src + x]!;
      const left = x >= bpp ? out[dst + x - bpp]! : 0;
      const up = y > 0 ? out[prev + x]! : 0;
      const upLeft = y > 0 && x >= bpp ? out[prev + x - bpp]! : 0;
      let predictor: number;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = left; break;
        case 2: predictor = up; break;
        case 3: predictor = (left + up) >> 1; break;
        case 4: predictor = paeth(left, up, upLeft); break;
        default: throw new IconError(`invalid PNG filter type ${filter} on row ${y}`);
      }
      out[dst + x] = (value + predictor) & 0xff;
    }
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}
