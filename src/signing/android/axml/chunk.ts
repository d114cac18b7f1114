// Bounds-checked little-endian reads and the ResChunk_header walk shared by the binary XML
// (AXML) and resources.arsc parsers. Hand-written: no maintained npm parser handles sparse /
// 16-bit-offset / compact resource tables (research note android-signing.md §14.2).
// Every failure is a SigningError `manifest_invalid`; nothing here can loop without consuming
// bytes, so malformed input ends in an error, never a hang.
import { SigningError } from '../../errors.ts';

// ResourceTypes.h: enum { RES_NULL_TYPE = 0x0000, RES_STRING_POOL_TYPE = 0x0001, ... }
export const RES_STRING_POOL_TYPE = 0x0001;
export const RES_TABLE_TYPE = 0x0002;
export const RES_XML_TYPE = 0x0003;
export const RES_XML_START_NAMESPACE_TYPE = 0x0100;
export const RES_XML_END_NAMESPACE_TYPE = 0x0101;
export const RES_XML_START_ELEMENT_TYPE = 0x0102;
export const RES_XML_END_ELEMENT_TYPE = 0x0103;
export const RES_XML_CDATA_TYPE = 0x0104;
export const RES_XML_RESOURCE_MAP_TYPE = 0x0180;
export const RES_TABLE_PACKAGE_TYPE = 0x0200;
export const RES_TABLE_TYPE_TYPE = 0x0201;
export const RES_TABLE_TYPE_SPEC_TYPE = 0x0202;
export const RES_TABLE_LIBRARY_TYPE = 0x0203;

/** ResourceTypes.h: struct ResChunk_header { uint16_t type; uint16_t headerSize; uint32_t size; } */
export const CHUNK_HEADER_SIZE = 8;

export function invalid(message: string, details?: Record<string, unknown>): never {
  throw new SigningError('manifest_invalid', message, details === undefined ? undefined : { details });
}

export function u8(buf: Buffer, offset: number, what: string): number {
  if (offset < 0 || offset + 1 > buf.length) invalid(`${what}: read past the end (offset ${offset}, size ${buf.length})`);
  return buf[offset]!;
}

export function u16(buf: Buffer, offset: number, what: string): number {
  if (offset < 0 || offset + 2 > buf.length) invalid(`${what}: read past the end (offset ${offset}, size ${buf.length})`);
  return buf.readUInt16LE(offset);
}

export function u32(buf: Buffer, offset: number, what: string): number {
  if (offset < 0 || offset + 4 > buf.length) invalid(`${what}: read past the end (offset ${offset}, size ${buf.length})`);
  return buf.readUInt32LE(offset);
}

export interface Chunk {
  readonly type: number;
  readonly headerSize: number;
  readonly size: number;
  /** Absolute offset of the chunk's first byte within the buffer. */
  readonly offset: number;
}

/**
 * Reads the chunk header at `offset` and checks it fits in [offset, end).
 * ResourceTypes.h: headerSize covers the header (>= 8) and size the whole chunk (>= headerSize).
 */
export function readChunk(buf: Buffer, offset: number, end: number, what: string): Chunk {
  if (offset + CHUNK_HEADER_SIZE > end) invalid(`${what}: truncated chunk header at ${offset}`);
  const type = u16(buf, offset, what);
  const headerSize = u16(buf, offset + 2, what);
  const size = u32(buf, offset + 4, what);
  if (headerSize < CHUNK_HEADER_SIZE || size < headerSize) {
    invalid(`${what}: chunk 0x${type.toString(16)} at ${offset} has headerSize ${headerSize} and size ${size}`);
  }
  if (offset + size > end) invalid(`${what}: chunk 0x${type.toString(16)} at ${offset} (size ${size}) runs past its parent's end ${end}`);
  return { type, headerSize, size, offset };
}

/**
 * The chunks laid end to end in [start, end). Each step advances by size >= 8, so the walk
 * terminates; trailing bytes shorter than a header are an error, as in AOSP's ResXMLTree::setTo.
 */
export function* childChunks(buf: Buffer, start: number, end: number, what: string): Generator<Chunk> {
  let pos = start;
  while (pos < end) {
    const chunk = readChunk(buf, pos, end, what);
    yield chunk;
    pos += chunk.size;
  }
}
