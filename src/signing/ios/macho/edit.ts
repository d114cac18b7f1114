// Reserving the code-signature area of a slice (codesign_allocate's job): where the code ends,
// and a copy of the model whose LC_CODE_SIGNATURE and __LINKEDIT describe the new signature.
// Rules: ios-signing.md §4 — the signature is the last thing in __LINKEDIT, 16-byte aligned,
// and __LINKEDIT ends exactly where the signature ends.
import { SigningError } from '../../errors.ts';
import { LC_CODE_SIGNATURE, LINKEDIT_DATA_COMMAND_SIZE, segmentPageSize } from './constants.ts';
import { codeSignatureCommand, findSegment, headerSize, linkeditDataEnd, linkeditEnd, loadCommandsLimit, segments, sizeOfCommands } from './inspect.ts';
import type { CodeSignatureCommand, LoadCommand, MachOSlice, SegmentCommand } from './types.ts';

export const SIGNATURE_ALIGNMENT = 16;

export const align = (value: number, to: number): number => Math.ceil(value / to) * to;

/**
 * End of the signed code: the old signature's dataoff, else the end of __LINKEDIT. Refuses slices
 * the kernel would not accept signed (no __LINKEDIT, __LINKEDIT not last, stray trailing bytes).
 */
export function codeEnd(slice: MachOSlice): number {
  const linkedit = findSegment(slice, '__LINKEDIT');
  if (!linkedit) throw new SigningError('macho_unsupported', 'The Mach-O slice has no __LINKEDIT segment to hold a signature');
  for (const segment of segments(slice)) {
    if (segment !== linkedit && segment.filesize > 0 && segment.fileoff + segment.filesize > linkedit.fileoff) {
      throw new SigningError('macho_unsupported', `Segment ${segment.segname} lies after __LINKEDIT; the signature must be the last thing in the file`);
    }
  }
  const signature = codeSignatureCommand(slice);
  const dataEnd = linkeditDataEnd(slice);
  if (signature) {
    // Everything after dataoff is dropped: no symbol table, fixup or trie may live there.
    if (dataEnd > signature.dataoff) {
      throw new SigningError('macho_unsupported', `__LINKEDIT data runs to byte ${dataEnd}, past the old signature at ${signature.dataoff}; the signature must be the last thing in the file`);
    }
    // The old signature is replaced wholesale; it must sit inside __LINKEDIT.
    if (signature.dataoff < linkedit.fileoff || signature.dataoff > slice.data.length) {
      throw new SigningError('macho_invalid', 'LC_CODE_SIGNATURE points outside __LINKEDIT');
    }
    return signature.dataoff;
  }
  const end = linkeditEnd(slice);
  if (dataEnd > end) throw new SigningError('macho_invalid', `Malformed Mach-O: __LINKEDIT data runs to byte ${dataEnd}, past the end of __LINKEDIT`);
  if (end !== slice.data.length) {
    throw new SigningError('macho_unsupported', `${slice.data.length - end} bytes follow __LINKEDIT in an unsigned slice; they would not be covered by the signature`);
  }
  return end;
}

/**
 * A copy of the model with a signature of `space` bytes at `sigOff`: LC_CODE_SIGNATURE replaced
 * or appended (in the header padding; macho_no_room when it does not fit), __LINKEDIT resized and
 * its vmsize rounded up to the segment alignment. codesign_allocate rounds to the slice's fat
 * alignment (2^align) inside a fat file and to the CPU page size in a thin file (the hqtsm
 * goldens: thin x86_64 → 0x1000, x86_64 slice of a 2^14-aligned fat file → 0x4000).
 */
export function withSignatureSpace(slice: MachOSlice, sigOff: number, space: number, segmentAlignment = segmentPageSize(slice.header.cputype)): MachOSlice {
  if (sigOff % SIGNATURE_ALIGNMENT !== 0) throw new Error('signature offset must be 16-byte aligned');
  if (sigOff + space > 0xffffffff) throw new SigningError('macho_unsupported', 'The signed slice would exceed 4 GiB');
  const commands: LoadCommand[] = slice.commands.map((c) => (c.kind === 'raw' ? c : { ...c }));
  let signature = commands.find((c): c is CodeSignatureCommand => c.kind === 'code-signature');
  if (!signature) {
    const needed = headerSize(slice) + sizeOfCommands(slice) + LINKEDIT_DATA_COMMAND_SIZE;
    const limit = loadCommandsLimit(slice);
    if (needed > limit) {
      throw new SigningError('macho_no_room', `Adding LC_CODE_SIGNATURE needs load commands up to byte ${needed}, but section data starts at ${limit}`, {
        details: { needed, limit },
      });
    }
    signature = { kind: 'code-signature', cmd: LC_CODE_SIGNATURE, dataoff: 0, datasize: 0 };
    commands.push(signature);
  }
  signature.dataoff = sigOff;
  signature.datasize = space;
  const linkedit = commands.find((c): c is SegmentCommand => c.kind === 'segment' && c.segname === '__LINKEDIT');
  if (!linkedit) throw new SigningError('macho_unsupported', 'The Mach-O slice has no __LINKEDIT segment to hold a signature');
  linkedit.filesize = sigOff + space - linkedit.fileoff;
  linkedit.vmsize = BigInt(align(linkedit.filesize, segmentAlignment));
  return { header: { ...slice.header }, commands, data: slice.data };
}
