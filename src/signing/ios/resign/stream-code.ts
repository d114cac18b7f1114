// Reading a thin Mach-O file back for verification in one streaming pass, without holding it:
// the verifier needs its header and load commands, its signature, the hashes of its code pages
// and (when a parent bundle seals it) the digests of the whole file — nothing else of its bytes
// (codesign/verify.ts reads code only to hash pages). So the entry streams past once (inflated,
// size and CRC-32 checked by the zip reader): 4 KiB pages are hashed with every hash type the
// file's header implies (hash-agility.ts), whole-file digests are taken, and only the head (header
// and load commands) and the signature are kept. standInOf turns them into a stand-in of the
// file's size whose other bytes are zeros (zero-filled allocations this large are mapped lazily,
// so they cost no memory; the streaming signer uses the same stand-in, codesign/sign-stream.ts),
// which verifyMachO checks with pageHashesOf. Should its code directory ask for hashes not taken
// here (another page size, hash type or code limit), the caller reads the file whole and
// verifies again.
//
// What this returns is plain data (the byte arrays own their memory), so the re-signer's thread
// can take it from the written output and post it back (read-back.ts) as the verifier takes it
// from the output itself (verify-ipa.ts).
import { createHash, hash } from 'node:crypto';
import type { DataSource } from '../../data-source.ts';
import type { ZipLimits } from '../../zip/index.ts';
import { readContentChunks, type EntryLocation } from '../../zip/entry-content.ts';
import type { HashName, HashType } from '../codesign/digest.ts';
import { digestSet } from '../codesign/hash-agility.ts';
import { FAT_MAGIC, FAT_MAGIC_64 } from '../macho/constants.ts';
import { codeSignatureCommand } from '../macho/inspect.ts';
import { isMachO, parseSlice } from '../macho/parse.ts';

const PAGE = 4096;
const MACH_HEADER_64 = 32;
// Reads and inflated chunks of 1 MiB rather than the zip reader's 64 KiB: each is a trip to
// libuv's pool, whose wake-up the reading thread pays (deflate-pieces.ts PIECE_SIZE); an 80 MiB
// executable takes ~80 of them instead of ~1,300.
const STREAM_CHUNK = 1024 * 1024;

export interface StreamCodeOptions {
  /** Take the whole file's SHA-1 and SHA-256 too (a parent bundle seals it). */
  wholeFile: boolean;
  /** Bytes per read and inflated chunk (default 1 MiB). */
  chunk?: number;
  /**
   * Told of each chunk once it is hashed (reclaim.ts droppedBuffers), for a thread that
   * allocates too little else for V8 to collect the chunks soon.
   */
  dropped?: (bytes: number) => void;
}

export interface StreamedCode {
  /** The file's size. */
  readonly size: number;
  /** Bytes [0, head.length): the header and load commands. */
  readonly head: Uint8Array;
  /** Bytes [codeLimit, size): the code signature (LC_CODE_SIGNATURE's dataoff to the end). */
  readonly signature: Uint8Array;
  /** Where the page hashes stop: the signature's offset. */
  readonly codeLimit: number;
  /** The hashes of every 4 KiB page below codeLimit, per hash type, slot after slot. */
  readonly pageHashes: ReadonlyArray<readonly [HashName, Uint8Array]>;
  /** Whole-file SHA-1 and SHA-256, when asked for. */
  readonly digests: { readonly sha1: Uint8Array; readonly sha256: Uint8Array } | undefined;
}

/** Undefined when the file is not a thin Mach-O file whose code signature ends it (read it whole instead). */
export async function streamCode(source: DataSource, entry: EntryLocation, limits: ZipLimits, { wholeFile, chunk: chunkSize = STREAM_CHUNK, dropped }: StreamCodeOptions): Promise<StreamedCode | undefined> {
  const size = entry.uncompressedSize;
  const sha1 = wholeFile ? createHash('sha1') : undefined;
  const sha256 = wholeFile ? createHash('sha256') : undefined;
  let head: Buffer[] = [];
  let headLength = 0;
  let plan: { head: Uint8Array; signature: Uint8Array; limit: number; types: HashType[]; out: Buffer[] } | undefined;
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
  for await (const chunk of readContentChunks(source, entry, limits, chunkSize)) {
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
      const commandsEnd = Math.min(size, MACH_HEADER_64 + (littleEndian ? first.readUInt32LE(20) : first.readUInt32BE(20)));
      if (first.length < commandsEnd) continue;
      let command;
      let slice;
      try {
        // parseSlice reads the header and load commands only: a stand-in holding just those will do.
        slice = parseSlice(standInOf({ size, head: first.subarray(0, commandsEnd), signature: new Uint8Array(0), codeLimit: size }));
        command = codeSignatureCommand(slice);
      } catch {
        return undefined; // the whole-file path reports it in its usual terms
      }
      if (command === undefined || command.dataoff + command.datasize !== size || command.dataoff < commandsEnd) return undefined;
      const types = digestSet([slice]);
      // Owned copies (not views of the chunk), so that the result can be posted between threads.
      plan = {
        head: new Uint8Array(first.subarray(0, commandsEnd)),
        signature: new Uint8Array(command.datasize),
        limit: command.dataoff,
        types,
        out: types.map((t) => Buffer.from(new ArrayBuffer(Math.ceil(command.dataoff / PAGE) * t.size))),
      };
      head = [];
      // The chunks so far, now that the plan is known.
      keep(plan.signature, first, 0, plan.limit);
      pages(first);
      position = first.length;
      continue;
    }
    keep(plan.signature, chunk, position, plan.limit);
    pages(chunk);
    position += chunk.length;
    dropped?.(chunk.length);
  }
  if (plan === undefined) return undefined;
  if (pendingLength > 0) hashPage(pending.subarray(0, pendingLength));
  return {
    size,
    head: plan.head,
    signature: plan.signature,
    codeLimit: plan.limit,
    pageHashes: plan.types.map((type, i) => [type.name, new Uint8Array(plan!.out[i]!.buffer)] as const),
    digests: sha1 === undefined ? undefined : { sha1: new Uint8Array(sha1.digest()), sha256: new Uint8Array(sha256!.digest()) },
  };
}

/** The file as verifyMachO reads it: header, load commands and signature real, code bytes zeros. */
export function standInOf(code: Pick<StreamedCode, 'size' | 'head' | 'signature' | 'codeLimit'>): Buffer {
  const standIn = Buffer.alloc(code.size);
  standIn.set(code.head, 0);
  standIn.set(code.signature, code.codeLimit);
  return standIn;
}

/** The page hashes taken, as VerifyMachOOptions.pageHashes asks for them (undefined: not taken). */
export function pageHashesOf(code: StreamedCode): (type: HashType, codeLimit: number, pageSize: number) => Buffer | undefined {
  return (type, codeLimit, pageSize) => {
    const taken = code.pageHashes.find(([name]) => name === type.name)?.[1];
    return taken === undefined || codeLimit !== code.codeLimit || pageSize !== PAGE ? undefined : Buffer.from(taken.buffer, taken.byteOffset, taken.byteLength);
  };
}

/** Copies the part of `chunk` (at `position` in the file) from `signatureStart` on into the signature. */
function keep(signature: Uint8Array, chunk: Buffer, position: number, signatureStart: number): void {
  const from = Math.max(position, signatureStart);
  if (from < position + chunk.length) signature.set(chunk.subarray(from - position), from - signatureStart);
}
