// Signing a thin Mach-O file in one streaming pass, without holding it: the bytes signMachO would
// produce, for files too large to keep in memory (an 80 MiB main executable). Hand-written, like
// the rest of this signer: no library signs Mach-O files, let alone as a stream.
//
// What a re-sign changes before the signature is only the header: LC_CODE_SIGNATURE and the
// __LINKEDIT sizes (edit.ts), both fixed from the load commands, the old signature (identifier and
// entitlements to carry over) and the file size, with the signature size computed exactly up
// front (sign-slice.ts). Everything after the header up to the old code end is copied unchanged,
// and the new signature is appended (ios-signing.md §4: the signature is the last thing in
// __LINKEDIT, which ends the file). So the new header is emitted first, the code streams through
// while its pages are hashed, and the SuperBlob is built and emitted at the end.
//
// The layout decisions are signMachO's own (prepareMachO / prepareSlice), made on a stand-in of
// the file: a zero-filled buffer of the file's size holding its real header and old signature.
// Nothing reads its code bytes (those stream past instead); zero-filled allocations this large
// are mapped lazily by the allocator, so the untouched pages cost no memory. Fat files are not
// streamed (their slices would need one stand-in each; rare at this size): callers sign them in
// memory. The equivalence with signMachO is tested byte for byte (test/signing/ios/codesign).
import { createHash, hash, type Hash } from 'node:crypto';
import { SigningError } from '../../errors.ts';
import { FAT_MAGIC, FAT_MAGIC_64 } from '../macho/constants.ts';
import { codeSignatureCommand } from '../macho/inspect.ts';
import { isMachO, parseSlice } from '../macho/parse.ts';
import type { HashType } from './digest.ts';
import { prepareMachO, type PreparedMachO, type SignMachOOptions } from './sign.ts';
import { prepareSlice, type CodeDirectoryDigest, type PreparedSlice } from './sign-slice.ts';

/** Random access for the few bytes the plan needs, plus one sequential pass over the whole file. */
export interface MachOStreamInput {
  readonly size: number;
  /** Bytes [offset, offset + length): the header and the old signature, read once each. */
  read(offset: number, length: number): Promise<Buffer>;
  /** The whole file from byte 0, in order; consumed once, to its end (so it can check a CRC). */
  chunks(): AsyncIterable<Buffer>;
}

export interface MachOStreamSigner {
  readonly identifier: string;
  readonly arch: string;
  /** Size of the signed file (with a layout fixed at the end, an estimate until then). */
  readonly size: number;
  /** Length of the signed file's header and load commands: its first chunk. */
  readonly headLength: number;
  /**
   * The signed file's bytes, in order, the same as signMachO(...).chunks joined — except that with
   * `layoutAtEnd` the first `headLength` bytes are zeros standing in for the header, which `head`
   * gives once the chunks are exhausted. Iterate once; `codeDirectories` and `digests` are set
   * once it is exhausted. The input is read once, as it is iterated.
   */
  chunks(): AsyncGenerator<Buffer>;
  /** The signed header and load commands (with `layoutAtEnd`, only once the chunks are exhausted). */
  head(): Buffer;
  codeDirectories: CodeDirectoryDigest[] | undefined;
  /** Digests of the whole signed file, by name, as asked for in `fileDigests`. */
  digests: Map<string, Buffer> | undefined;
}

const MACH_HEADER_64 = 32;

/** A thin Mach-O file opened for streaming: its stand-in, and the input it streams from. */
export interface MachOStream {
  /** Header and (unless skipped) old signature are real, code bytes are zeros (see above). */
  readonly standIn: Buffer;
  readonly input: MachOStreamInput;
}

export interface OpenMachOStreamOptions {
  /**
   * Whether to read the old signature (default true). It is at the end of the file — for a
   * deflated entry a whole extra inflate pass — and only needed to carry over its identifier
   * (when no `identifier` is given) or its entitlements; a caller that needs neither skips it.
   */
  oldSignature?: boolean;
}

/** Reads the header and old signature of a Mach-O file; undefined for fat files (use signMachO). */
export async function openMachOStream(input: MachOStreamInput, options: OpenMachOStreamOptions = {}): Promise<MachOStream | undefined> {
  const standIn = await readStandIn(input, options.oldSignature ?? true);
  return standIn === undefined ? undefined : { standIn, input };
}

export interface StreamingSignerOptions {
  /** Whole-file digests of the signed output to compute on the way (e.g. for a parent's seal). */
  fileDigests?: ReadonlyArray<'sha1' | 'sha256'>;
  /**
   * Awaited after the code has streamed past, before the signature is built: the special slots'
   * digests (e.g. CodeResources, sealed while the code streams) may be filled in until then.
   * Only their values may change, not which slots are present: the layout is already fixed.
   */
  beforeSignature?: () => Promise<void>;
  /**
   * The options, from the stand-in with its old signature, decided once the file has streamed
   * past (the `options` given fix a provisional layout). For a file opened without its old
   * signature because reaching it costs a pass of its own (a deflated zip entry): the signature
   * arrives last in the stream anyway, and of the header it decides only the signature's size,
   * so the code streams and is page-hashed first while the header, and the pages it shares,
   * wait for the end (see layoutAtEnd below). Not with `fileDigests`, which need the header first.
   */
  layoutAtEnd?: (standIn: Buffer) => SignMachOOptions;
}

/** Fixes the signed layout of an opened file, as signMachO would with these options. */
export function streamingSigner(stream: MachOStream, options: SignMachOOptions, streaming: StreamingSignerOptions = {}): MachOStreamSigner {
  const fileDigests = streaming.fileDigests ?? [];
  const { input, standIn } = stream;
  let prepared = prepareMachO(standIn, options);
  let slice = preparedSlice(prepared);
  const layoutAtEnd = streaming.layoutAtEnd;
  if (layoutAtEnd !== undefined && (fileDigests.length > 0 || slice.pageSize === 0)) throw new Error('internal: a layout fixed at the end needs no whole-file digests and paged code');
  const signer: MachOStreamSigner = {
    get identifier() {
      return prepared.identifier;
    },
    arch: prepared.slices[0]!.arch,
    get size() {
      return slice.size;
    },
    headLength: slice.head.length,
    head: () => slice.head,
    codeDirectories: undefined,
    digests: undefined,
    chunks: async function* () {
      const wholeFile = fileDigests.map((name) => [name, createHash(name)] as const);
      // With the layout fixed at the end, the pages the header shares are hashed then, from
      // `leading` (the header, then the code bytes up to the next page boundary).
      const leading = layoutAtEnd === undefined ? undefined : Buffer.alloc(Math.min(slice.codeLimit, Math.ceil(slice.head.length / slice.pageSize) * slice.pageSize));
      const pages = new PageHasher(slice, leading?.length ?? 0);
      const emit = (bytes: Buffer, code = true): Buffer => {
        if (code) pages.update(bytes);
        for (const [, h] of wholeFile) h.update(bytes);
        return bytes;
      };
      const { head, codeEnd } = slice;
      yield leading === undefined ? emit(head) : Buffer.alloc(head.length);
      // Input bytes [head.length, codeEnd) pass through; the old header before and the old
      // signature after are read (the source checks its CRC at the end) but not emitted.
      let position = 0;
      for await (const chunk of input.chunks()) {
        const from = position;
        position += chunk.length;
        const start = Math.max(from, head.length);
        const end = Math.min(position, codeEnd);
        if (end <= start) {
          if (leading !== undefined && position > codeEnd) keepSignature(standIn, chunk, from, codeEnd);
          continue;
        }
        // The whole chunk, when it is all code: a writer may know its CRC-32 already (zip/chunk-crc.ts).
        const code = start === from && end === position ? chunk : chunk.subarray(start - from, end - from);
        if (leading === undefined) yield emit(code);
        else {
          // Bytes below `leading` wait for the header; the rest are hashed now.
          if (start < leading.length) code.copy(leading, start, 0, Math.min(code.length, leading.length - start));
          if (end > leading.length) pages.update(code.subarray(Math.max(0, leading.length - start)));
          yield code;
          if (position > codeEnd) keepSignature(standIn, chunk, from, codeEnd);
        }
      }
      if (position !== input.size) throw new SigningError('macho_invalid', `The Mach-O file streamed ${position} bytes, not the ${input.size} its header was read from`);
      if (layoutAtEnd !== undefined) {
        slice = relayout(slice, (prepared = prepareMachO(standIn, layoutAtEnd(standIn))));
        slice.head.copy(leading!);
        pages.hashLeading(leading!);
      }
      // The tail starts with the zero gap up to the aligned signature, which is code.
      pages.update(Buffer.alloc(slice.codeLimit - Math.max(codeEnd, leading?.length ?? 0)));
      await streaming.beforeSignature?.();
      const { tail, codeDirectories } = slice.finish(pages.finish());
      yield emit(tail, false);
      signer.codeDirectories = codeDirectories;
      signer.digests = new Map(wholeFile.map(([name, h]) => [name, h.digest()]));
    },
  };
  return signer;
}

function preparedSlice(prepared: PreparedMachO): PreparedSlice {
  if (prepared.file.kind !== 'thin') throw new Error('internal: a fat file was opened for streaming');
  return prepareSlice(prepared.file.slice, prepared.slices[0]!.plan);
}

/**
 * The layout fixed at the end. Only the signature's size may differ from the provisional one
 * (it is in the header, emitted as zeros until now): where the code ends, its pages and hash
 * types, and the header's length are the load commands', whatever the signature holds.
 */
function relayout(provisional: PreparedSlice, prepared: PreparedMachO): PreparedSlice {
  const slice = preparedSlice(prepared);
  const same = slice.head.length === provisional.head.length && slice.codeEnd === provisional.codeEnd && slice.codeLimit === provisional.codeLimit && slice.pageSize === provisional.pageSize && slice.hashTypes.map((t) => t.name).join() === provisional.hashTypes.map((t) => t.name).join();
  if (!same) throw new Error('internal: the layout fixed at the end moved the code');
  return slice;
}

/** Copies the part of `chunk` (at `position` in the file) from `codeEnd` on - the old signature - into the stand-in. */
function keepSignature(standIn: Buffer, chunk: Buffer, position: number, codeEnd: number): void {
  const from = Math.max(position, codeEnd);
  chunk.copy(standIn, from, from - position);
}

/** The stand-in: zeros of the file's size, with its real header + load commands and old signature. */
async function readStandIn(input: MachOStreamInput, oldSignature: boolean): Promise<Buffer | undefined> {
  const { size } = input;
  const first = await input.read(0, Math.min(size, MACH_HEADER_64));
  if (!isMachO(first)) throw new SigningError('macho_invalid', 'Malformed Mach-O: unknown magic');
  const magic = first.readUInt32BE(0);
  if (magic === FAT_MAGIC || magic === FAT_MAGIC_64) return undefined;
  if (first.length < 28) throw new SigningError('macho_invalid', 'Malformed Mach-O: slice is shorter than a mach_header');
  // MH_MAGIC(_64) read little-endian starts 0xfe; the byte-swapped MH_CIGAM(_64) does not.
  const littleEndian = first.readUInt32LE(0) >>> 24 === 0xfe;
  const sizeofcmds = littleEndian ? first.readUInt32LE(20) : first.readUInt32BE(20);
  // parseSlice checks the command area against the size; read what exists of it.
  const head = await input.read(0, Math.min(size, MACH_HEADER_64 + sizeofcmds));
  const standIn = Buffer.alloc(size);
  head.copy(standIn);
  const command = codeSignatureCommand(parseSlice(standIn));
  if (oldSignature && command !== undefined && command.datasize > 0) (await input.read(command.dataoff, command.datasize)).copy(standIn, command.dataoff);
  return standIn;
}

/** Page hashes (every hash type of the slice) of bytes given in arbitrary chunks. */
class PageHasher {
  private readonly types: readonly HashType[];
  private readonly pageSize: number;
  private readonly out: Buffer[];
  private readonly whole: Hash[] | undefined;
  private readonly pending: Buffer;
  private pendingLength = 0;
  private page = 0;
  private fed = 0;
  private readonly limit: number;

  /** `from`: the bytes before it are hashed later, by hashLeading (a whole number of pages, or the limit). */
  constructor(slice: PreparedSlice, from = 0) {
    this.types = slice.hashTypes;
    this.pageSize = slice.pageSize;
    this.limit = slice.codeLimit;
    this.fed = from;
    this.page = from === 0 ? 0 : Math.ceil(from / slice.pageSize);
    const pages = slice.pageSize === 0 ? 1 : Math.ceil(slice.codeLimit / slice.pageSize);
    this.out = this.types.map((t) => Buffer.allocUnsafe(pages * t.size));
    // pageSize 0: the whole code is one "page" (cs_blobs.h), hashed incrementally.
    this.whole = slice.pageSize === 0 ? this.types.map((t) => createHash(t.algorithm)) : undefined;
    this.pending = Buffer.allocUnsafe(Math.max(1, slice.pageSize));
  }

  update(bytes: Buffer): void {
    const take = Math.min(bytes.length, this.limit - this.fed);
    if (take < bytes.length) throw new Error('internal: more code than its limit');
    this.fed += take;
    if (this.whole !== undefined) {
      for (const h of this.whole) h.update(bytes);
      return;
    }
    let at = 0;
    if (this.pendingLength > 0) {
      at = bytes.copy(this.pending, this.pendingLength, 0, Math.min(bytes.length, this.pageSize - this.pendingLength));
      this.pendingLength += at;
      if (this.pendingLength < this.pageSize) return;
      this.hashPage(this.pending);
      this.pendingLength = 0;
    }
    for (; at + this.pageSize <= bytes.length; at += this.pageSize) this.hashPage(bytes.subarray(at, at + this.pageSize));
    this.pendingLength = bytes.copy(this.pending, 0, at);
  }

  finish(): Buffer[] {
    if (this.fed !== this.limit) throw new Error(`internal: hashed ${this.fed} bytes of code, not ${this.limit}`);
    if (this.whole !== undefined) return this.whole.map((h, i) => h.digest().subarray(0, this.types[i]!.size));
    if (this.pendingLength > 0) this.hashPage(this.pending.subarray(0, this.pendingLength));
    return this.out;
  }

  /** Hashes the pages of bytes [0, from) - given whole, now - into their slots. */
  hashLeading(bytes: Buffer): void {
    for (let at = 0, page = 0; at < bytes.length; at += this.pageSize, page++) this.hashPageAt(bytes.subarray(at, at + this.pageSize), page);
  }

  private hashPage(page: Buffer): void {
    this.hashPageAt(page, this.page);
    this.page++;
  }

  private hashPageAt(page: Buffer, index: number): void {
    // Same one-shot, string-returning hash as digest.ts hashPages (the fastest Node path).
    this.types.forEach((type, i) => this.out[i]!.write(hash(type.algorithm, page, 'binary'), index * type.size, type.size, 'latin1'));
  }
}
