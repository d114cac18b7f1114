// ResStringPool: the string table at the head of every AXML document and resources.arsc
// (and of each package's type/key names). Strings are decoded lazily and cached: a
// resources.arsc global pool can hold tens of thousands of strings and we need a handful.
import { invalid, u16, u32, u8, type Chunk } from './chunk.ts';

// ResourceTypes.h: struct ResStringPool_header { ResChunk_header header; uint32_t stringCount;
// uint32_t styleCount; uint32_t flags; uint32_t stringsStart; uint32_t stylesStart; }
const POOL_HEADER_SIZE = 28;
// ResourceTypes.h: SORTED_FLAG = 1<<0, UTF8_FLAG = 1<<8
const UTF8_FLAG = 1 << 8;
/** ResourceTypes.h: a ResStringPool_ref of 0xFFFFFFFF means "no string". */
export const NO_STRING = 0xffffffff;

const utf8 = new TextDecoder('utf-8', { fatal: false });
const utf16 = new TextDecoder('utf-16le', { fatal: false });

export class StringPool {
  readonly count: number;
  readonly utf8: boolean;
  private readonly buf: Buffer;
  private readonly offsetsAt: number;
  private readonly dataStart: number;
  private readonly dataEnd: number;
  private readonly cache = new Map<number, string>();

  constructor(buf: Buffer, chunk: Chunk) {
    const what = 'string pool';
    if (chunk.headerSize < POOL_HEADER_SIZE) invalid(`${what}: header size ${chunk.headerSize} < ${POOL_HEADER_SIZE}`);
    const base = chunk.offset;
    const end = base + chunk.size;
    const stringCount = u32(buf, base + 8, what);
    const styleCount = u32(buf, base + 12, what);
    const flags = u32(buf, base + 16, what);
    const stringsStart = u32(buf, base + 20, what);
    const stylesStart = u32(buf, base + 24, what);
    // ResStringPool::setTo: the offset tables (strings then styles, u32 each) follow the header
    // and must fit in the chunk before the string data.
    const offsetsAt = base + chunk.headerSize;
    if ((stringCount + styleCount) * 4 > chunk.size - chunk.headerSize) {
      invalid(`${what}: ${stringCount} strings and ${styleCount} styles do not fit in ${chunk.size} bytes`);
    }
    let dataStart = end;
    let dataEnd = end;
    if (stringCount > 0) {
      if (stringsStart < chunk.headerSize + (stringCount + styleCount) * 4 || stringsStart >= chunk.size) {
        invalid(`${what}: stringsStart ${stringsStart} is outside the chunk`);
      }
      dataStart = base + stringsStart;
      // Strings end where styles begin (ResStringPool::setTo: mStringPoolSize).
      if (styleCount > 0) {
        if (stylesStart <= stringsStart || stylesStart > chunk.size) invalid(`${what}: stylesStart ${stylesStart} is outside the chunk`);
        dataEnd = base + stylesStart;
      }
    }
    this.buf = buf;
    this.count = stringCount;
    this.utf8 = (flags & UTF8_FLAG) !== 0;
    this.offsetsAt = offsetsAt;
    this.dataStart = dataStart;
    this.dataEnd = dataEnd;
  }

  /** The string at `index`, or null for NO_STRING (0xFFFFFFFF). Out-of-range indexes are errors. */
  get(index: number): string | null {
    if (index === NO_STRING) return null;
    if (index >= this.count) invalid(`string index ${index} is out of range (pool holds ${this.count})`);
    const cached = this.cache.get(index);
    if (cached !== undefined) return cached;
    const value = this.decode(index);
    this.cache.set(index, value);
    return value;
  }

  private decode(index: number): string {
    const what = `string #${index}`;
    const at = this.dataStart + u32(this.buf, this.offsetsAt + index * 4, what);
    if (at < this.dataStart || at >= this.dataEnd) invalid(`${what}: offset is outside the string data`);
    if (this.utf8) {
      // ResStringPool::stringAt (UTF-8): UTF-16 length then UTF-8 byte length, each 1 byte or,
      // with the high bit set, 2 bytes (15 bits); then the bytes and a NUL.
      let pos = at;
      const skip = this.len8(pos, what);
      pos = skip.next;
      const bytes = this.len8(pos, what);
      pos = bytes.next;
      if (pos + bytes.value > this.dataEnd) invalid(`${what}: ${bytes.value} bytes run past the pool`);
      return utf8.decode(this.buf.subarray(pos, pos + bytes.value));
    }
    // ResStringPool::stringAt (UTF-16): length in u16 units, 1 unit or, with the high bit set,
    // 2 units (31 bits); then the units and a NUL unit.
    let pos = at;
    let length = u16(this.buf, pos, what);
    pos += 2;
    if (length & 0x8000) {
      length = ((length & 0x7fff) << 16) | u16(this.buf, pos, what);
      pos += 2;
    }
    if (pos + length * 2 > this.dataEnd) invalid(`${what}: ${length} UTF-16 units run past the pool`);
    return utf16.decode(this.buf.subarray(pos, pos + length * 2));
  }

  private len8(pos: number, what: string): { value: number; next: number } {
    const first = u8(this.buf, pos, what);
    if (pos >= this.dataEnd) invalid(`${what}: length runs past the pool`);
    if ((first & 0x80) === 0) return { value: first, next: pos + 1 };
    return { value: ((first & 0x7f) << 8) | u8(this.buf, pos + 1, what), next: pos + 2 };
  }
}
