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
import { prepareMachO, type SignMachOOptions } from './sign.ts';
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
  /** Size of the signed file. */
  readonly size: number;
  /**
   * The signed file's bytes, in order, the same as signMachO(...).chunks joined. Iterate once;
   * `codeDirectories` and `digests` are set once it is exhausted.
   * The input is read once, as it is iterated.
   */
  chunks(): AsyncGenerator<Buffer>;
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
}

/** Fixes the signed layout of an opened file, as signMachO would with these options. */
export function streamingSigner(stream: MachOStream, options: SignMachOOptions, streaming: StreamingSignerOptions = {}): MachOStreamSigner {
  const fileDigests = streaming.fileDigests ?? [];
  const { input } = stream;
  const prepared = prepareMachO(stream.standIn, options);
  if (prepared.file.kind !== 'thin') throw new Error('internal: a fat file was opened for streaming');
  const slice = prepareSlice(prepared.file.slice, prepared.slices[0]!.plan);
  const signer: MachOStreamSigner = {
    identifier: prepared.identifier,
    arch: prepared.slices[0]!.arch,
    size: slice.size,
    codeDirectories: undefined,
    digests: undefined,
    chunks: async function* () {
      const wholeFile = fileDigests.map((name) => [name, createHash(name)] as const);
      const pages = new PageHasher(slice);
      const emit = (bytes: Buffer, code = true): Buffer => {
        if (code) pages.update(bytes);
        for (const [, h] of wholeFile) h.update(bytes);
        return bytes;
      };
      yield emit(slice.head);
      // Input bytes [head.length, codeEnd) pass through; the old header before and the old
      // signature after are read (the source checks its CRC at the end) but not emitted.
      let position = 0;
      for await (const chunk of input.chunks()) {
        const start = Math.max(position, slice.head.length);
        const end = Math.min(position + chunk.length, slice.codeEnd);
        position += chunk.length;
        if (end > start) yield emit(chunk.subarray(start - (position - chunk.length), end - (position - chunk.length)));
      }
      if (position !== input.size) throw new SigningError('macho_invalid', `The Mach-O file streamed ${position} bytes, not the ${input.size} its header was read from`);
      // The tail starts with the zero gap up to the aligned signature, which is code.
      pages.update(Buffer.alloc(slice.codeLimit - slice.codeEnd));
      await streaming.beforeSignature?.();
      const { tail, codeDirectories } = slice.finish(pages.finish());
      yield emit(tail, false);
      signer.codeDirectories = codeDirectories;
      signer.digests = new Map(wholeFile.map(([name, h]) => [name, h.digest()]));
    },
  };
  return signer;
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

  constructor(slice: PreparedSlice) {
    this.types = slice.hashTypes;
    this.pageSize = slice.pageSize;
    this.limit = slice.codeLimit;
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

  private hashPage(page: Buffer): void {
    // Same one-shot, string-returning hash as digest.ts hashPages (the fastest Node path).
    this.types.forEach((type, i) => this.out[i]!.write(hash(type.algorithm, page, 'binary'), this.page * type.size, type.size, 'latin1'));
    this.page++;
  }
}
