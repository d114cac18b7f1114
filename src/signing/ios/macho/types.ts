// The Mach-O model the signer works on: parse.ts fills it from bytes, build.ts writes it back.
// Only what code signing touches is typed (segments, LC_CODE_SIGNATURE); every other load command
// is kept as raw bytes so a parse → build round trip reproduces the input exactly.

export interface MachOHeader {
  readonly is64: boolean;
  /** Byte order of the slice's own fields (iOS/macOS: little-endian; ppc: big-endian). */
  readonly littleEndian: boolean;
  cputype: number;
  cpusubtype: number;
  filetype: number;
  flags: number;
  /** mach_header_64.reserved (0 in practice), kept for the round trip. */
  reserved: number;
}

/** section / section_64: only what layout checks need; the raw 68/80 bytes are written back as-is. */
export interface Section {
  readonly sectname: string;
  readonly segname: string;
  readonly offset: number;
  readonly size: number;
  readonly flags: number;
  readonly raw: Buffer;
}

export interface SegmentCommand {
  readonly kind: 'segment';
  readonly cmd: number;
  segname: string;
  vmaddr: bigint;
  vmsize: bigint;
  fileoff: number;
  filesize: number;
  maxprot: number;
  initprot: number;
  flags: number;
  sections: Section[];
}

/** linkedit_data_command for LC_CODE_SIGNATURE. */
export interface CodeSignatureCommand {
  readonly kind: 'code-signature';
  readonly cmd: number;
  dataoff: number;
  datasize: number;
}

/** Any other load command, kept byte for byte (header included). */
export interface RawCommand {
  readonly kind: 'raw';
  readonly cmd: number;
  readonly raw: Buffer;
}

export type LoadCommand = SegmentCommand | CodeSignatureCommand | RawCommand;

export interface MachOSlice {
  header: MachOHeader;
  commands: LoadCommand[];
  /**
   * The slice's bytes as parsed. build.ts takes everything outside the header and load-command
   * region from here; the signer never mutates it (it may be a view of the caller's input).
   */
  readonly data: Buffer;
}

export interface FatArch {
  cputype: number;
  cpusubtype: number;
  /** Slice offset in the fat file; build.ts recomputes it when undefined. */
  offset: number | undefined;
  /** log2 of the slice alignment. */
  align: number;
  /** fat_arch_64.reserved, kept for the round trip. */
  reserved: number;
}

export interface ThinFile {
  readonly kind: 'thin';
  slice: MachOSlice;
}

export interface FatFile {
  readonly kind: 'fat';
  /** 0xcafebabf header with 64-bit offsets and sizes. */
  readonly fat64: boolean;
  arches: FatArch[];
  slices: MachOSlice[];
}

export type MachOFile = ThinFile | FatFile;

/** Minimum OS from LC_BUILD_VERSION or LC_VERSION_MIN_*: version is xxxx.yy.zz in nibbles. */
export interface MinimumOS {
  readonly platform: number;
  readonly version: number;
}
