// Just enough of a PNG to rank icons: the IHDR size and whether Apple's CgBI chunk precedes it.
// PNG spec (RFC 2083 §3.1–3.2, §4.1.1): signature, then chunks {u32 length, type, data, crc};
// IHDR is the first chunk of a standard PNG. Xcode's pngcrush puts "CgBI" before IHDR.

export interface PngHeader {
  readonly width: number;
  readonly height: number;
  readonly cgbi: boolean;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Null when the bytes are not a PNG whose IHDR is among its first two chunks. */
export function readPngHeader(bytes: Buffer): PngHeader | null {
  if (bytes.length < 8 || !bytes.subarray(0, 8).equals(SIGNATURE)) return null;
  let pos = 8;
  let cgbi = false;
  for (let i = 0; i < 2 && pos + 8 <= bytes.length; i++) {
    const length = bytes.readUInt32BE(pos);
    const type = bytes.toString('latin1', pos + 4, pos + 8);
    if (type === 'CgBI') cgbi = true;
    if (type === 'IHDR') {
      if (length < 8 || pos + 16 > bytes.length) return null;
      return { width: bytes.readUInt32BE(pos + 8), height: bytes.readUInt32BE(pos + 12), cgbi };
    }
    pos += 12 + length;
  }
  return null;
}
