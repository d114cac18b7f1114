// Reading a large thin Mach-O file back for verification in one streaming pass, without holding
// it: the verifier needs its header and load commands, its signature, the hashes of its code
// pages and (when a parent bundle seals it) the digests of the whole file — nothing else of its
// bytes (codesign/verify.ts reads code only to hash pages). So the entry streams past once
// (inflated, size and CRC-32 checked by the zip reader): 4 KiB pages are hashed with every hash
// type the file's header implies (hash-agility.ts), whole-file digests are taken, and only the
// header and the signature are kept, in a stand-in of the file's size whose other bytes are zeros
// (zero-filled allocations this large are mapped lazily, so they cost no memory; the streaming
// signer uses the same stand-in, codesign/sign-stream.ts). verifyMachO then checks the stand-in
// with these page hashes. Should its code directory ask for hashes not taken here (another page
// size, hash type or code limit), the caller reads the file whole and verifies again.
import { createHash, hash } from 'node:crypto';
import type { ZipEntry, ZipReader } from '../../zip/index.ts';
import { readContentChunks } from '../../zip/entry-content.ts';
import { digestSet, type HashType } from '../codesign/index.ts';
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
  /** Header, load commands and signature real; code bytes zeros. */
  standIn: Buffer;
  /** The page hashes taken, for VerifyMachOOptions.pageHashes. */
  pageHashes: (type: HashType, codeLimit: number, pageSize: number) => Buffer | undefined;
  /** Whole-file SHA-1 + SHA-256, when asked for. */
  record: FileRecord | undefined;
}

/** Undefined when the file is not a thin Mach-O file with a code signature command (read it whole instead). */
export async function streamCode(zip: ZipReader, entry: ZipEntry, wholeFile: boolean): Promise<StreamedCode | undefined> {
  const size = entry.uncompressedSize;
  const sha1 = wholeFile ? createHash('sha1') : undefined;
  const sha256 = wholeFile ? createHash('sha256') : undefined;
  let standIn: Buffer | undefined;
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
  for await (const chunk of readContentChunks(zip.source, entry, zip.limits, STREAM_CHUNK)) {
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
      first.copy(standIn, 0, 0, Math.min(size, commandsEnd));
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
    standIn: standIn!,
    pageHashes: (type, codeLimit, pageSize) => {
      const i = types.findIndex((t) => t.name === type.name);
      return i < 0 || codeLimit !== limit || pageSize !== PAGE ? undefined : out[i];
    },
    record: sha1 === undefined ? undefined : { kind: 'file', sha1: sha1.digest(), sha256: sha256!.digest() },
  };
}

/** Copies the part of `chunk` (at `position` in the file) from `signatureStart` on into the stand-in. */
function keep(standIn: Buffer, chunk: Buffer, position: number, signatureStart: number): void {
  const from = Math.max(position, signatureStart);
  if (from < position + chunk.length) chunk.copy(standIn, from, from - position);
}
