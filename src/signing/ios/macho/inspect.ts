// Read-only questions the signer and verifier ask of a parsed slice (derived, never stored, so
// they stay right after build-time edits).
import {
  LC_BUILD_VERSION, LC_SYMTAB, LC_ENCRYPTION_INFO, LC_ENCRYPTION_INFO_64, LC_UUID, LC_VERSION_MIN_IPHONEOS,
  LC_VERSION_MIN_MACOSX, LC_VERSION_MIN_TVOS, LC_VERSION_MIN_WATCHOS, PLATFORM_IOS, PLATFORM_MACOS,
  PLATFORM_TVOS, PLATFORM_WATCHOS,
} from './constants.ts';
import type { CodeSignatureCommand, MachOSlice, MinimumOS, RawCommand, SegmentCommand } from './types.ts';

export function headerSize(slice: MachOSlice): number {
  return slice.header.is64 ? 32 : 28;
}

export function sizeOfCommands(slice: MachOSlice): number {
  let total = 0;
  for (const command of slice.commands) total += commandSize(slice, command);
  return total;
}

export function commandSize(slice: MachOSlice, command: MachOSlice['commands'][number]): number {
  switch (command.kind) {
    case 'segment':
      return slice.header.is64 ? 72 + 80 * command.sections.length : 56 + 68 * command.sections.length;
    case 'code-signature':
      return 16;
    case 'raw':
      return command.raw.length;
  }
}

export function segments(slice: MachOSlice): SegmentCommand[] {
  return slice.commands.filter((c): c is SegmentCommand => c.kind === 'segment');
}

export function findSegment(slice: MachOSlice, name: string): SegmentCommand | undefined {
  return segments(slice).find((s) => s.segname === name);
}

export function codeSignatureCommand(slice: MachOSlice): CodeSignatureCommand | undefined {
  return slice.commands.find((c): c is CodeSignatureCommand => c.kind === 'code-signature');
}

function rawCommand(slice: MachOSlice, ...cmds: number[]): RawCommand | undefined {
  return slice.commands.find((c): c is RawCommand => c.kind === 'raw' && cmds.includes(c.cmd));
}

function u32(slice: MachOSlice, raw: Buffer, at: number): number | undefined {
  if (at + 4 > raw.length) return undefined;
  return slice.header.littleEndian ? raw.readUInt32LE(at) : raw.readUInt32BE(at);
}

/** LC_UUID payload (16 bytes), if present and well-formed. */
export function uuid(slice: MachOSlice): Buffer | undefined {
  const command = rawCommand(slice, LC_UUID);
  return command && command.raw.length === 24 ? command.raw.subarray(8, 24) : undefined;
}

const VERSION_MIN_PLATFORM: Record<number, number> = {
  [LC_VERSION_MIN_MACOSX]: PLATFORM_MACOS,
  [LC_VERSION_MIN_IPHONEOS]: PLATFORM_IOS,
  [LC_VERSION_MIN_TVOS]: PLATFORM_TVOS,
  [LC_VERSION_MIN_WATCHOS]: PLATFORM_WATCHOS,
};

/** Platform and minimum OS from LC_BUILD_VERSION, else LC_VERSION_MIN_*; undefined if neither. */
export function minimumOS(slice: MachOSlice): MinimumOS | undefined {
  const build = rawCommand(slice, LC_BUILD_VERSION);
  if (build) {
    const platform = u32(slice, build.raw, 8);
    const version = u32(slice, build.raw, 12);
    if (platform !== undefined && version !== undefined) return { platform, version };
  }
  const min = rawCommand(slice, LC_VERSION_MIN_MACOSX, LC_VERSION_MIN_IPHONEOS, LC_VERSION_MIN_TVOS, LC_VERSION_MIN_WATCHOS);
  if (min) {
    const version = u32(slice, min.raw, 8);
    if (version !== undefined) return { platform: VERSION_MIN_PLATFORM[min.cmd]!, version };
  }
  return undefined;
}

/** cryptid of LC_ENCRYPTION_INFO(_64): non-zero means FairPlay-encrypted App Store pages. */
export function cryptId(slice: MachOSlice): number {
  const command = rawCommand(slice, LC_ENCRYPTION_INFO, LC_ENCRYPTION_INFO_64);
  return command ? (u32(slice, command.raw, 16) ?? 0) : 0;
}

/** Where a signature-less slice's code ends: the end of __LINKEDIT (or the last segment's data). */
export function linkeditEnd(slice: MachOSlice): number {
  const linkedit = findSegment(slice, '__LINKEDIT');
  if (linkedit) return linkedit.fileoff + linkedit.filesize;
  let end = 0;
  for (const s of segments(slice)) end = Math.max(end, s.fileoff + s.filesize);
  return end;
}

// loader.h section types whose contents occupy no file bytes.
const S_ZEROFILL = 0x1;
const S_GB_ZEROFILL = 0xc;
const S_THREAD_LOCAL_ZEROFILL = 0x12;

/**
 * The first file offset used by section or segment contents: load commands must end at or
 * before it (codesign_allocate's rule for adding LC_CODE_SIGNATURE into the header padding).
 */
export function loadCommandsLimit(slice: MachOSlice): number {
  let limit = slice.data.length;
  for (const segment of segments(slice)) {
    if (segment.filesize > 0 && segment.fileoff > 0) limit = Math.min(limit, segment.fileoff);
    for (const section of segment.sections) {
      const type = section.flags & 0xff;
      if (type === S_ZEROFILL || type === S_GB_ZEROFILL || type === S_THREAD_LOCAL_ZEROFILL) continue;
      if (section.offset > 0 && section.size > 0) limit = Math.min(limit, section.offset);
    }
  }
  return limit;
}

// loader.h commands that point into __LINKEDIT: linkedit_data_command {dataoff, datasize} ones,
// LC_SYMTAB, LC_DYSYMTAB and LC_DYLD_INFO(_ONLY).
const LINKEDIT_DATA_COMMANDS = new Set([0x1e, 0x26, 0x29, 0x2b, 0x2e, 0x36, 0x80000033, 0x80000034]);
const LC_DYSYMTAB = 0xb;
const LC_DYLD_INFO = 0x22;
const LC_DYLD_INFO_ONLY = 0x80000022;

/**
 * End of the last byte of __LINKEDIT data that some load command points at (symbol and string
 * tables, fixups, export trie, function starts…), the signature excluded. The signer must not
 * cut anything below it when it drops an old signature.
 */
export function linkeditDataEnd(slice: MachOSlice): number {
  let end = 0;
  const range = (raw: Buffer, offsetAt: number, countAt: number, unit: number): void => {
    const offset = u32(slice, raw, offsetAt);
    const count = u32(slice, raw, countAt);
    if (offset !== undefined && count !== undefined && count > 0) end = Math.max(end, offset + count * unit);
  };
  const nlist = slice.header.is64 ? 16 : 12;
  for (const command of slice.commands) {
    if (command.kind !== 'raw') continue;
    const { cmd, raw } = command;
    if (LINKEDIT_DATA_COMMANDS.has(cmd)) range(raw, 8, 12, 1);
    else if (cmd === LC_SYMTAB) {
      range(raw, 8, 12, nlist);
      range(raw, 16, 20, 1);
    } else if (cmd === LC_DYSYMTAB) {
      range(raw, 32, 36, 8);
      range(raw, 40, 44, slice.header.is64 ? 56 : 52);
      range(raw, 48, 52, 4);
      range(raw, 56, 60, 4);
      range(raw, 64, 68, 8);
      range(raw, 72, 76, 8);
    } else if (cmd === LC_DYLD_INFO || cmd === LC_DYLD_INFO_ONLY) {
      for (let at = 8; at <= 40; at += 8) range(raw, at, at + 4, 1);
    }
  }
  return end;
}
