// Writes the Mach-O model back to bytes. A slice is its original bytes with the header and load
// commands re-serialised from the model; a fat file is its slices laid out on their alignments
// (fat.h, big-endian headers). parse → build reproduces the input byte for byte.
import { SigningError } from '../../errors.ts';
import { FAT_MAGIC, FAT_MAGIC_64, MH_MAGIC, MH_MAGIC_64 } from './constants.ts';
import { commandSize, headerSize, loadCommandsLimit, sizeOfCommands } from './inspect.ts';
import type { FatArch, MachOFile, MachOSlice } from './types.ts';

export interface BuildSliceOptions {
  /** Output length; the original bytes are cut or zero-extended to it. Default: unchanged. */
  length?: number;
}

/** Serialises a slice: original data, with the header and load commands written from the model. */
export function buildSlice(slice: MachOSlice, options: BuildSliceOptions = {}): Buffer {
  const chunks = buildSliceChunks(slice, options);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * The same bytes as buildSlice, as chunks: a fresh copy of the header + load-command area, then
 * views of the original data (not copied — an 80 MiB executable is not duplicated), then zeros.
 */
export function buildSliceChunks(slice: MachOSlice, options: BuildSliceOptions = {}): Buffer[] {
  const length = options.length ?? slice.data.length;
  const hsize = headerSize(slice);
  const commandsEnd = hsize + Math.max(readSizeofcmds(slice), sizeOfCommands(slice));
  const head = Buffer.alloc(commandsEnd);
  slice.data.copy(head, 0, 0, Math.min(commandsEnd, slice.data.length));
  writeCommands(slice, head);
  if (commandsEnd > length) throw new SigningError('macho_invalid', 'Malformed Mach-O: load commands exceed the slice');
  const chunks: Buffer[] = [head];
  const viewEnd = Math.min(length, slice.data.length);
  if (viewEnd > commandsEnd) chunks.push(slice.data.subarray(commandsEnd, viewEnd));
  if (length > Math.max(viewEnd, commandsEnd)) chunks.push(Buffer.alloc(length - Math.max(viewEnd, commandsEnd)));
  return chunks;
}

/**
 * Writes header + load commands into `out` (which already holds the slice's other bytes).
 * The old command area beyond the new end is zeroed (it becomes header padding again).
 */
export function writeCommands(slice: MachOSlice, out: Buffer): void {
  const { header } = slice;
  const hsize = headerSize(slice);
  const sizeofcmds = sizeOfCommands(slice);
  const oldEnd = hsize + readSizeofcmds(slice);
  const newEnd = hsize + sizeofcmds;
  if (newEnd > oldEnd && newEnd > loadCommandsLimit(slice)) {
    throw new SigningError('macho_no_room', undefined, { details: { needed: newEnd, limit: loadCommandsLimit(slice) } });
  }
  if (newEnd > out.length) throw new SigningError('macho_invalid', 'Malformed Mach-O: load commands exceed the slice');
  const le = header.littleEndian;
  const w32 = (value: number, at: number): void => {
    if (le) out.writeUInt32LE(value >>> 0, at);
    else out.writeUInt32BE(value >>> 0, at);
  };
  const w64 = (value: bigint, at: number): void => {
    if (le) out.writeBigUInt64LE(value, at);
    else out.writeBigUInt64BE(value, at);
  };
  w32(header.is64 ? MH_MAGIC_64 : MH_MAGIC, 0);
  w32(header.cputype, 4);
  w32(header.cpusubtype, 8);
  w32(header.filetype, 12);
  w32(slice.commands.length, 16);
  w32(sizeofcmds, 20);
  w32(header.flags, 24);
  if (header.is64) w32(header.reserved, 28);

  let at = hsize;
  for (const command of slice.commands) {
    const size = commandSize(slice, command);
    switch (command.kind) {
      case 'raw':
        command.raw.copy(out, at);
        break;
      case 'code-signature':
        w32(command.cmd, at);
        w32(16, at + 4);
        w32(command.dataoff, at + 8);
        w32(command.datasize, at + 12);
        break;
      case 'segment': {
        w32(command.cmd, at);
        w32(size, at + 4);
        out.fill(0, at + 8, at + 24);
        out.write(command.segname, at + 8, 16, 'latin1');
        let p: number;
        if (header.is64) {
          w64(command.vmaddr, at + 24);
          w64(command.vmsize, at + 32);
          w64(BigInt(command.fileoff), at + 40);
          w64(BigInt(command.filesize), at + 48);
          p = at + 56;
        } else {
          w32(Number(command.vmaddr), at + 24);
          w32(Number(command.vmsize), at + 28);
          w32(command.fileoff, at + 32);
          w32(command.filesize, at + 36);
          p = at + 40;
        }
        w32(command.maxprot, p);
        w32(command.initprot, p + 4);
        w32(command.sections.length, p + 8);
        w32(command.flags, p + 12);
        let s = p + 16;
        for (const section of command.sections) {
          section.raw.copy(out, s);
          s += section.raw.length;
        }
        break;
      }
    }
    at += size;
  }
  if (oldEnd > newEnd) out.fill(0, newEnd, Math.min(oldEnd, out.length));
}

/** sizeofcmds as stored in the original bytes (the extent of the command area being replaced). */
function readSizeofcmds(slice: MachOSlice): number {
  return slice.header.littleEndian ? slice.data.readUInt32LE(20) : slice.data.readUInt32BE(20);
}

export interface FatEntry {
  arch: FatArch;
  bytes: Buffer;
}

/**
 * Lays out a fat file. Entries with an offset keep it (round trip); entries without one go to the
 * first offset after the previous slice that is a multiple of 2^align (lipo / codesign_allocate).
 */
export function buildFat(fat64: boolean, entries: FatEntry[]): Buffer {
  return Buffer.concat(buildFatChunks(fat64, entries.map(({ arch, bytes }) => ({ arch, chunks: [bytes] }))));
}

export interface FatChunkEntry {
  arch: FatArch;
  /** The slice's bytes as consecutive chunks. */
  chunks: Buffer[];
}

/** buildFat as chunks: header, then each slice's chunks preceded by its zero alignment gap. */
export function buildFatChunks(fat64: boolean, entries: FatChunkEntry[]): Buffer[] {
  if (entries.length === 0) throw new SigningError('macho_invalid', 'A fat file needs at least one slice');
  const headerEnd = 8 + entries.length * (fat64 ? 32 : 20);
  const sizes = entries.map((e) => e.chunks.reduce((n, c) => n + c.length, 0));
  const offsets: number[] = [];
  let cursor = headerEnd;
  entries.forEach(({ arch }, i) => {
    const alignment = 2 ** arch.align;
    const offset = arch.offset ?? Math.ceil(cursor / alignment) * alignment;
    if (offset < cursor || offset % alignment !== 0) {
      throw new SigningError('macho_invalid', `Fat slice offset ${offset} overlaps the previous slice or breaks its 2^${arch.align} alignment`);
    }
    if (!fat64 && offset + sizes[i]! > 0xffffffff) {
      throw new SigningError('macho_unsupported', 'The fat file would exceed 4 GiB; a 64-bit fat header is needed');
    }
    offsets.push(offset);
    cursor = offset + sizes[i]!;
  });
  const header = Buffer.alloc(headerEnd);
  header.writeUInt32BE(fat64 ? FAT_MAGIC_64 : FAT_MAGIC, 0);
  header.writeUInt32BE(entries.length, 4);
  const chunks: Buffer[] = [header];
  let written = headerEnd;
  entries.forEach(({ arch, chunks: sliceChunks }, i) => {
    const at = 8 + i * (fat64 ? 32 : 20);
    const offset = offsets[i]!;
    header.writeInt32BE(arch.cputype | 0, at);
    header.writeInt32BE(arch.cpusubtype | 0, at + 4);
    if (fat64) {
      header.writeBigUInt64BE(BigInt(offset), at + 8);
      header.writeBigUInt64BE(BigInt(sizes[i]!), at + 16);
      header.writeUInt32BE(arch.align, at + 24);
      header.writeUInt32BE(arch.reserved, at + 28);
    } else {
      header.writeUInt32BE(offset, at + 8);
      header.writeUInt32BE(sizes[i]!, at + 12);
      header.writeUInt32BE(arch.align, at + 16);
    }
    if (offset > written) chunks.push(Buffer.alloc(offset - written));
    chunks.push(...sliceChunks);
    written = offset + sizes[i]!;
  });
  return chunks;
}

/** Serialises a parsed file (thin or fat) from its model. */
export function buildMachO(file: MachOFile): Buffer {
  if (file.kind === 'thin') return buildSlice(file.slice);
  return buildFat(
    file.fat64,
    file.slices.map((slice, i) => ({ arch: file.arches[i]!, bytes: buildSlice(slice) })),
  );
}
