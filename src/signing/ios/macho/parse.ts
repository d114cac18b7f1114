// Mach-O and fat-file parser (hand-written: no maintained JS library models load commands for
// rewriting). Layouts: <mach-o/loader.h>, <mach-o/fat.h>; see ../SPECIFICATION.md §1.
// Every offset and size is checked against the buffer before use: inputs are untrusted uploads.
import { SigningError } from '../../errors.ts';
import {
  FAT_MAGIC, FAT_MAGIC_64, LC_CODE_SIGNATURE, LC_SEGMENT, LC_SEGMENT_64, MAX_FAT_ARCHS,
  MH_CIGAM, MH_CIGAM_64, MH_MAGIC, MH_MAGIC_64,
} from './constants.ts';
import type { FatArch, FatFile, LoadCommand, MachOFile, MachOHeader, MachOSlice, Section, SegmentCommand } from './types.ts';

const invalid = (message: string, details?: Record<string, unknown>): SigningError =>
  new SigningError('macho_invalid', `Malformed Mach-O: ${message}`, details ? { details } : undefined);

/** True when the bytes start like a Mach-O or fat file (and not like a Java class file). */
export function isMachO(bytes: Buffer): boolean {
  if (bytes.length < 8) return false;
  const magic = bytes.readUInt32BE(0);
  if (magic === FAT_MAGIC || magic === FAT_MAGIC_64) {
    // Java .class files share 0xcafebabe; their next word (minor/major version) is ≥ 45.
    const n = bytes.readUInt32BE(4);
    return n > 0 && n <= MAX_FAT_ARCHS;
  }
  const le = bytes.readUInt32LE(0);
  return le === MH_MAGIC || le === MH_MAGIC_64 || le === MH_CIGAM || le === MH_CIGAM_64;
}

/** Parses a thin or fat Mach-O file. Slices are views of `bytes` (nothing is copied). */
export function parseMachO(bytes: Buffer): MachOFile {
  if (bytes.length < 8) throw invalid('file is shorter than a Mach-O header');
  const magic = bytes.readUInt32BE(0);
  if (magic === FAT_MAGIC || magic === FAT_MAGIC_64) return parseFat(bytes, magic === FAT_MAGIC_64);
  return { kind: 'thin', slice: parseSlice(bytes) };
}

function parseFat(bytes: Buffer, fat64: boolean): FatFile {
  // fat.h: the fat header and fat_arch records are always big-endian.
  const count = bytes.readUInt32BE(4);
  if (count === 0 || count > MAX_FAT_ARCHS) throw invalid(`implausible fat slice count ${count}`);
  const entrySize = fat64 ? 32 : 20;
  const headerEnd = 8 + count * entrySize;
  if (headerEnd > bytes.length) throw invalid('fat header runs past the end of the file');
  const arches: FatArch[] = [];
  const slices: MachOSlice[] = [];
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < count; i++) {
    const at = 8 + i * entrySize;
    const cputype = bytes.readInt32BE(at);
    const cpusubtype = bytes.readInt32BE(at + 4);
    const offset = fat64 ? safeU64(bytes.readBigUInt64BE(at + 8)) : bytes.readUInt32BE(at + 8);
    const size = fat64 ? safeU64(bytes.readBigUInt64BE(at + 16)) : bytes.readUInt32BE(at + 12);
    const align = bytes.readUInt32BE(at + (fat64 ? 24 : 16));
    const reserved = fat64 ? bytes.readUInt32BE(at + 28) : 0;
    if (align > 16) throw invalid(`slice ${i} alignment 2^${align} is implausible`);
    // macho++.cpp / cctools: each slice starts on its alignment, after the header, inside the file.
    if (offset < headerEnd || size === 0 || offset + size > bytes.length) {
      throw invalid(`slice ${i} [${offset}, +${size}) lies outside the file`);
    }
    if (offset % 2 ** align !== 0) throw invalid(`slice ${i} offset ${offset} is not aligned to 2^${align}`);
    const slice = parseSlice(bytes.subarray(offset, offset + size));
    if (slice.header.cputype !== cputype || slice.header.cpusubtype !== cpusubtype) {
      throw invalid(`fat entry ${i} cputype/cpusubtype differ from its slice header`);
    }
    arches.push({ cputype, cpusubtype, offset, align, reserved });
    slices.push(slice);
    ranges.push([offset, offset + size]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < ranges.length; i++) {
    if (ranges[i]![0] < ranges[i - 1]![1]) throw invalid('fat slices overlap');
  }
  // Apple's universal-file checks: no bytes after the last slice, gaps all zero. Enforcing this
  // also makes the model complete: build.ts can reproduce the file from the slices alone.
  if (ranges[ranges.length - 1]![1] !== bytes.length) throw invalid('bytes follow the last fat slice');
  let cursor = headerEnd;
  for (const [start, end] of ranges) {
    if (!isZero(bytes, cursor, start)) throw invalid('non-zero bytes between fat slices');
    cursor = end;
  }
  return { kind: 'fat', fat64, arches, slices };
}

/** Parses one thin Mach-O image occupying all of `bytes`. */
export function parseSlice(bytes: Buffer): MachOSlice {
  if (bytes.length < 28) throw invalid('slice is shorter than a mach_header');
  const raw = bytes.readUInt32LE(0);
  let is64: boolean;
  let littleEndian: boolean;
  if (raw === MH_MAGIC || raw === MH_MAGIC_64) {
    littleEndian = true;
    is64 = raw === MH_MAGIC_64;
  } else if (raw === MH_CIGAM || raw === MH_CIGAM_64) {
    littleEndian = false;
    is64 = raw === MH_CIGAM_64;
  } else {
    throw invalid(`unknown magic 0x${bytes.readUInt32BE(0).toString(16).padStart(8, '0')}`);
  }
  const u32 = (at: number): number => (littleEndian ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const i32 = (at: number): number => (littleEndian ? bytes.readInt32LE(at) : bytes.readInt32BE(at));
  const u64 = (at: number): bigint => (littleEndian ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at));
  const headerSize = is64 ? 32 : 28;
  if (bytes.length < headerSize) throw invalid('slice is shorter than its mach_header');
  const header: MachOHeader = {
    is64,
    littleEndian,
    cputype: i32(4),
    cpusubtype: i32(8),
    filetype: u32(12),
    flags: u32(24),
    reserved: is64 ? u32(28) : 0,
  };
  const ncmds = u32(16);
  const sizeofcmds = u32(20);
  if (headerSize + sizeofcmds > bytes.length) throw invalid('load commands run past the end of the slice');
  if (ncmds * 8 > sizeofcmds) throw invalid(`${ncmds} load commands cannot fit in ${sizeofcmds} bytes`);

  const commands: LoadCommand[] = [];
  let at = headerSize;
  const end = headerSize + sizeofcmds;
  let signatures = 0;
  for (let i = 0; i < ncmds; i++) {
    if (at + 8 > end) throw invalid(`load command ${i} starts past sizeofcmds`);
    const cmd = u32(at);
    const cmdsize = u32(at + 4);
    if (cmdsize < 8 || cmdsize % 4 !== 0 || at + cmdsize > end) {
      throw invalid(`load command ${i} (0x${cmd.toString(16)}) has bad cmdsize ${cmdsize}`);
    }
    if (cmd === LC_SEGMENT_64 || cmd === LC_SEGMENT) {
      commands.push(parseSegment(bytes, at, cmdsize, cmd === LC_SEGMENT_64, u32, u64));
    } else if (cmd === LC_CODE_SIGNATURE) {
      if (cmdsize !== 16) throw invalid(`LC_CODE_SIGNATURE cmdsize ${cmdsize} is not 16`);
      if (++signatures > 1) throw invalid('more than one LC_CODE_SIGNATURE');
      const dataoff = u32(at + 8);
      const datasize = u32(at + 12);
      if (dataoff + datasize > bytes.length) throw invalid('LC_CODE_SIGNATURE points past the end of the slice');
      commands.push({ kind: 'code-signature', cmd, dataoff, datasize });
    } else {
      commands.push({ kind: 'raw', cmd, raw: bytes.subarray(at, at + cmdsize) });
    }
    at += cmdsize;
  }
  // loader.h: sizeofcmds is the sum of cmdsize; a mismatch means a corrupt or hand-edited header.
  if (at !== end) throw invalid(`load commands fill ${at - headerSize} bytes but sizeofcmds is ${sizeofcmds}`);
  return { header, commands, data: bytes };
}

function parseSegment(
  bytes: Buffer,
  at: number,
  cmdsize: number,
  is64: boolean,
  u32: (at: number) => number,
  u64: (at: number) => bigint,
): SegmentCommand {
  const base = is64 ? 72 : 56;
  const sectionSize = is64 ? 80 : 68;
  if (cmdsize < base) throw invalid(`segment command of ${cmdsize} bytes is too short`);
  const segname = cString(bytes, at + 8, 16);
  const vmaddr = is64 ? u64(at + 24) : BigInt(u32(at + 24));
  const vmsize = is64 ? u64(at + 32) : BigInt(u32(at + 28));
  const fileoff = is64 ? safeU64(u64(at + 40)) : u32(at + 32);
  const filesize = is64 ? safeU64(u64(at + 48)) : u32(at + 36);
  const p = at + (is64 ? 56 : 40);
  const nsects = u32(p + 8);
  if (cmdsize !== base + nsects * sectionSize) throw invalid(`segment ${segname} cmdsize ${cmdsize} does not match ${nsects} sections`);
  if (fileoff + filesize > bytes.length) throw invalid(`segment ${segname} extends past the end of the slice`);
  const sections: Section[] = [];
  for (let s = 0; s < nsects; s++) {
    const sa = at + base + s * sectionSize;
    const size = is64 ? safeU64(u64(sa + 40)) : u32(sa + 36);
    const offset = u32(sa + (is64 ? 48 : 40));
    const flags = u32(sa + (is64 ? 64 : 56));
    sections.push({
      sectname: cString(bytes, sa, 16),
      segname: cString(bytes, sa + 16, 16),
      offset,
      size,
      flags,
      raw: bytes.subarray(sa, sa + sectionSize),
    });
  }
  return {
    kind: 'segment',
    cmd: is64 ? LC_SEGMENT_64 : LC_SEGMENT,
    segname,
    vmaddr,
    vmsize,
    fileoff,
    filesize,
    maxprot: u32(p),
    initprot: u32(p + 4),
    flags: u32(p + 12),
    sections,
  };
}

function safeU64(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid(`64-bit file offset ${value} is out of range`);
  return Number(value);
}

export function cString(bytes: Buffer, at: number, max: number): string {
  const field = bytes.subarray(at, at + max);
  const nul = field.indexOf(0);
  return field.toString('latin1', 0, nul < 0 ? field.length : nul);
}

function isZero(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}
