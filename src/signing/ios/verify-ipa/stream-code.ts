// Reading a thin Mach-O file back for verification in one streaming pass, without holding it:
// the verifier needs its header and load commands, its signature, the hashes of its code pages
// and (when a parent bundle seals it) the digests of the whole file — nothing else of its bytes
// (codesign/verify.ts reads code only to hash pages). So the entry streams past once (inflated,
// size and CRC-32 checked by the zip reader): 4 KiB pages are hashed with every hash type the
// file's header implies (hash-agility.ts), whole-file digests are taken, and only the header and
// the signature are kept. verifyMachO then checks a stand-in of the file's size made of those
// bytes and zeros (standInOf; zero-filled allocations this large are mapped lazily, so they cost
// no memory; the streaming signer uses the same stand-in, codesign/sign-stream.ts) with these
// page hashes. Should its code directory ask for hashes not taken here (another page size, hash
// type or code limit), the caller reads the file whole and verifies again. The result is plain
// data, so the helper thread (../helper) can stream a file and hand the result over.
import { createHash, hash } from 'node:crypto';
import type { DataSource } from '../../data-source.ts';
import type { ZipLimits } from '../../zip/index.ts';
import { readContentChunks, type EntryLocation } from '../../zip/entry-content.ts';
import { digestSet, type HashName, type HashType } from '../codesign/index.ts';
import { FAT_MAGIC, FAT_MAGIC_64 } from '../macho/constants.ts';
import { codeSignatureCommand } from '../macho/inspect.ts';
import { isMachO, parseSlice } from '../macho/parse.ts';
import type { FileRecord } from '../resign/scan.ts';

const PAGE = 4096;
const MACH_HEADER_64 = 32;
// Reads and inflated chunks of 1 MiB rather than the zip reader's 64 KiB: each is a trip to
// libuv's pool, whose wake-up the main thread pays (deflate-pieces.ts PIECE_SIZE); an 80 MiB
// executable takes ~80 of them instead of ~1,300.
const STREAM_CHUNK = 1024 * 1024;

export interface StreamedCode {
  /** The file's size. */
  size: number;
  /** Its header and load commands, and its signature (from codeLimit on): the only bytes of the file the checks read besides the pages hashed here (standIn). */
  head: Buffer;
  signature: Buffer;
  /** Where the code ends (the signature's offset): the page hashes cover [0, codeLimit). */
  codeLimit: number;
  /** The hashes of every 4 KiB page below codeLimit, per hash type the header implies. */
  pageHashes: Array<{ type: HashName; hashes: Buffer }>;
  /** Whole-file SHA-1 + SHA-256, when asked for. */
  record: Extract<FileRecord, { kind: 'file' }> | undefined;
}

/** Undefined when the file is not a thin Mach-O file with a code signature command (read it whole instead). */
export async function streamCode(source: DataSource, limits: ZipLimits, entry: EntryLocation, wholeFile: boolean): Promise<StreamedCode | undefined> {
  const size = entry.uncompressedSize;
  const sha1 = wholeFile ? createHash('sha1') : undefined;
  const sha256 = wholeFile ? createHash('sha256') : undefined;
  let standIn: Buffer | undefined;
  let commandsLength = 0;
  let head: Buffer[] = [];
  let headLength = 0;
  let plan: { limit: number; types: HashType[]; out: Buffer[] } | undefined;
  const pending = Buffer.allocUnsafe(PAGE);
  let pendingLength = 0;
  let page = 0;
  let hashed = 0;
  const hashPage = (bytes: Buffer): void => {
    plan!.types.forEach((type, i) => plan!.out[i]!.write(hash(type.algorithm, bytes, 'binary'), page * type.size, type.size, 'latin1'));
    page++;
  };
  // Page hashes of [position, position + bytes.length) ∩ [0, limit), pages in order.
  const pages = (bytes: Buffer): void => {
    const take = Math.min(bytes.length, plan!.limit - hashed);
    if (take <= 0) return;
    hashed += take;
    let at = 0;
    if (pendingLength > 0) {
      at = bytes.copy(pending, pendingLength, 0, Math.min(take, PAGE - pendingLength));
      pendingLength += at;
      if (pendingLength < PAGE) return;
      hashPage(pending);
      pendingLength = 0;
    }
    for (; at + PAGE <= take; at += PAGE) hashPage(bytes.subarray(at, at + PAGE));
    pendingLength = bytes.copy(pending, 0, at, take);
  };
  let position = 0;
  for await (const chunk of readContentChunks(source, entry, limits, STREAM_CHUNK)) {
    sha1?.update(chunk);
    sha256?.update(chunk);
    if (plan === undefined) {
      head.push(chunk);
      headLength += chunk.length;
      const first = Buffer.concat(head, headLength);
      if (first.length < MACH_HEADER_64) continue;
      if (!isMachO(first)) return undefined;
      const magic = first.readUInt32BE(0);
      if (magic === FAT_MAGIC || magic === FAT_MAGIC_64) return undefined;
      const littleEndian = first.readUInt32LE(0) >>> 24 === 0xfe;
      const commandsEnd = MACH_HEADER_64 + (littleEndian ? first.readUInt32LE(20) : first.readUInt32BE(20));
      if (first.length < Math.min(size, commandsEnd)) continue;
      standIn = Buffer.alloc(size);
      commandsLength = Math.min(size, commandsEnd);
      first.copy(standIn, 0, 0, commandsLength);
      let command;
      let slice;
      try {
        slice = parseSlice(standIn);
        command = codeSignatureCommand(slice);
      } catch {
        return undefined; // the whole-file path reports it in its usual terms
      }
      if (command === undefined || command.dataoff + command.datasize !== size) return undefined;
      const types = digestSet([slice]);
      plan = { limit: command.dataoff, types, out: types.map((t) => Buffer.allocUnsafe(Math.ceil(command.dataoff / PAGE) * t.size)) };
      head = [];
      // The chunks so far, now that the plan is known.
      keep(standIn, first, 0, command.dataoff);
      pages(first);
      position = first.length;
      continue;
    }
    keep(standIn!, chunk, position, plan.limit);
    pages(chunk);
    position += chunk.length;
  }
  if (plan === undefined) return undefined;
  if (pendingLength > 0) hashPage(pending.subarray(0, pendingLength));
  const { limit, types, out } = plan;
  return {
    size,
    head: standIn!.subarray(0, commandsLength),
    signature: standIn!.subarray(limit),
    codeLimit: limit,
    pageHashes: types.map((type, i) => ({ type: type.name, hashes: out[i]! })),
    record: sha1 === undefined ? undefined : { kind: 'file', sha1: sha1.digest(), sha256: sha256!.digest() },
  };
}

/**
 * The file as the checks see it: header, load commands and signature real, the code zeros. In
 * `reuse` when given and large enough (all zeros but what standInOf itself put there: the caller
 * reuses it only for stand-ins, one at a time), else in a buffer of its own.
 */
export function standInOf(code: StreamedCode, reuse?: StandInBuffer): Buffer {
  const standIn = reuse?.take(code.size) ?? Buffer.alloc(code.size);
  code.head.copy(standIn, 0);
  code.signature.copy(standIn, code.codeLimit);
  reuse?.written(code.head.length, code.codeLimit, code.size);
  return standIn;
}

/**
 * One zeroed buffer for the stand-ins of small files, one after another: a new one per file (a
 * framework's 3 MiB) would be garbage for the collector each time. The bytes a stand-in put there
 * are zeroed again when the next one is taken.
 */
export class StandInBuffer {
  readonly #limit: number;
  #buffer = Buffer.alloc(0);
  #dirty: Array<[number, number]> = [];

  /** `limit`: the largest stand-in kept here; larger ones get buffers of their own. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** A zeroed buffer of `size` bytes, or undefined above the limit. */
  take(size: number): Buffer | undefined {
    if (size > this.#limit) return undefined;
    if (size > this.#buffer.length) this.#buffer = Buffer.alloc(size);
    else for (const [start, end] of this.#dirty) this.#buffer.fill(0, start, end);
    this.#dirty = [];
    return this.#buffer.subarray(0, size);
  }

  written(headLength: number, signatureStart: number, end: number): void {
    this.#dirty.push([0, headLength], [signatureStart, end]);
  }
}

/** The page hashes a stream took, as VerifyMachOOptions.pageHashes asks for them: none for another type, code limit or page size. */
export function takenPageHashes(streamed: StreamedCode): (type: HashType, codeLimit: number, pageSize: number) => Buffer | undefined {
  return (type, codeLimit, pageSize) => {
    if (codeLimit !== streamed.codeLimit || pageSize !== PAGE) return undefined;
    return streamed.pageHashes.find((taken) => taken.type === type.name)?.hashes;
  };
}

/** Copies the part of `chunk` (at `position` in the file) from `signatureStart` on into the stand-in. */
function keep(standIn: Buffer, chunk: Buffer, position: number, signatureStart: number): void {
  const from = Math.max(position, signatureStart);
  if (from < position + chunk.length) chunk.copy(standIn, from, from - position);
}
