// Res_value: the typed value carried by AXML attributes and resources.arsc entries.
import { invalid, u16, u32, u8 } from './chunk.ts';

// ResourceTypes.h: struct Res_value { uint16_t size; uint8_t res0; uint8_t dataType; uint32_t data; }
export const RES_VALUE_SIZE = 8;

// ResourceTypes.h: Res_value::TYPE_*
export const TYPE_NULL = 0x00;
export const TYPE_REFERENCE = 0x01;
export const TYPE_ATTRIBUTE = 0x02;
export const TYPE_STRING = 0x03;
export const TYPE_FLOAT = 0x04;
export const TYPE_DIMENSION = 0x05;
export const TYPE_FRACTION = 0x06;
export const TYPE_DYNAMIC_REFERENCE = 0x07;
export const TYPE_DYNAMIC_ATTRIBUTE = 0x08;
export const TYPE_INT_DEC = 0x10;
export const TYPE_INT_HEX = 0x11;
export const TYPE_INT_BOOLEAN = 0x12;
export const TYPE_FIRST_COLOR_INT = 0x1c;
export const TYPE_LAST_COLOR_INT = 0x1f;

export interface ResValue {
  readonly type: number;
  /** The raw 32-bit data word, unsigned. */
  readonly data: number;
}

export function readResValue(buf: Buffer, offset: number, what: string): ResValue {
  const size = u16(buf, offset, what);
  // AOSP tolerates sizes other than 8 in practice (ResXMLParser ignores it), but a value shorter
  // than its own fields is corrupt.
  if (size < RES_VALUE_SIZE) invalid(`${what}: Res_value size ${size} < ${RES_VALUE_SIZE}`);
  return { type: u8(buf, offset + 3, what), data: u32(buf, offset + 4, what) };
}

export function isReference(value: ResValue): boolean {
  return value.type === TYPE_REFERENCE || value.type === TYPE_DYNAMIC_REFERENCE;
}

export function isInteger(value: ResValue): boolean {
  return value.type === TYPE_INT_DEC || value.type === TYPE_INT_HEX;
}

/** The data word as a signed 32-bit integer (TYPE_INT_DEC values may be negative). */
export function signed(value: ResValue): number {
  return value.data | 0;
}
