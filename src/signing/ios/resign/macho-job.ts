// One Mach-O signing job: sign the file (src/signing/ios/codesign), then digest the signed bytes
// for the parent bundles' CodeResources (SHA-1 for `files`, SHA-256 for `files2`) and CRC-32 for
// the zip entry. Runs in a worker thread (macho-worker.ts) or in-process; inputs and outputs are
// plain data so they cross the thread boundary by structured clone and buffer transfer.
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Identity } from '../../cms/index.ts';
import type { PlistDict } from '../../plist/index.ts';
import { crc32Combine, crc32Middle } from '../../zip/crc32-combine.ts';
import { identityCodeSigner, signMachO, type CodeSigner, type SignMachOOptions } from '../codesign/index.ts';

export interface SlotDigests {
  sha1: Uint8Array;
  sha256: Uint8Array;
}

export interface MachOJob {
  /** The whole unsigned/old-signed file; transferred to the worker (do not reuse it). */
  bytes: Uint8Array;
  /** Zip path, for messages and the default identifier. */
  name: string;
  /** CFBundleIdentifier for a bundle's main executable; undefined for loose code. */
  identifier: string | undefined;
  isMainExecutable: boolean;
  entitlements: PlistDict | undefined;
  infoPlist: SlotDigests | undefined;
  codeResources: SlotDigests | undefined;
  identity: Identity;
  signingTime: Date;
  /**
   * Whether a parent bundle seals this file (its CodeResources lists the signed file's SHA-1 and
   * SHA-256). The top-level app's main executable is sealed by no one: its digests are skipped.
   */
  sealed?: boolean;
  /**
   * The CRC-32 of `bytes`, checked against them as they were read (read-macho.ts): the signed
   * file's CRC-32 is then derived for the code it keeps rather than computed over it again.
   */
  crc32?: number;
}

/** Where a piece of the signed file lives: the input buffer (unchanged code) or the new bytes. */
export interface ChunkRef {
  source: 'input' | 'new';
  offset: number;
  length: number;
}

export interface MachOJobResult {
  input: ArrayBuffer;
  fresh: ArrayBuffer;
  chunks: ChunkRef[];
  size: number;
  /** Digests of the signed file; empty when the job is not `sealed`. */
  sha1: Uint8Array;
  sha256: Uint8Array;
  crc32: number;
  identifier: string;
  /** Primary CodeDirectory hash per slice (first 20 bytes), for reports and nested seals. */
  cdhashes: string[];
  /** A thin file's header and load commands (its first chunk), written stored (output.ts); 0 when fat. */
  headLength: number;
}

/** The signMachO options a job stands for (shared with the streaming path in bundle-output.ts). */
export function signOptionsOf(job: Omit<MachOJob, 'bytes'>): SignMachOOptions {
  return {
    signer: codeSignerFor(job.identity, new Date(job.signingTime)),
    fileName: job.name.slice(job.name.lastIndexOf('/') + 1),
    ...(job.identifier === undefined ? {} : { identifier: job.identifier }),
    isMainExecutable: job.isMainExecutable,
    ...(job.entitlements === undefined ? {} : { entitlements: job.entitlements }),
    specialSlotHashes: {
      ...(job.infoPlist === undefined ? {} : { infoPlist: job.infoPlist }),
      ...(job.codeResources === undefined ? {} : { codeResources: job.codeResources }),
    },
  };
}

/** Signs one file, and takes the signed file's whole-file digests when a parent bundle seals it. */
export function runMachOJob(job: MachOJob): MachOJobResult {
  const fileDigests = job.sealed ?? true;
  const input = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
  const signed = signMachO(input, signOptionsOf(job));
  const sha1 = createHash('sha1');
  const sha256 = createHash('sha256');
  let crc = 0;
  const kept = job.crc32 === undefined ? undefined : keptCodeCrc(signed.chunks, input, job.crc32);
  // New bytes (headers, signatures) are gathered into one buffer; unchanged code stays a view of
  // the input, so an 80 MiB executable crosses back to the caller without being copied.
  const freshLength = signed.chunks.reduce((n, c) => n + (c.buffer === input.buffer ? 0 : c.length), 0);
  const fresh = Buffer.allocUnsafeSlow(freshLength);
  let freshAt = 0;
  const chunks: ChunkRef[] = [];
  for (const chunk of signed.chunks) {
    if (fileDigests) {
      sha1.update(chunk);
      sha256.update(chunk);
    }
    crc = chunk === kept?.chunk ? crc32Combine(crc, kept.crc, chunk.length) : crc32(chunk, crc);
    if (chunk.buffer === input.buffer) chunks.push({ source: 'input', offset: chunk.byteOffset, length: chunk.length });
    else {
      chunk.copy(fresh, freshAt);
      chunks.push({ source: 'new', offset: fresh.byteOffset + freshAt, length: chunk.length });
      freshAt += chunk.length;
    }
  }
  return {
    input: input.buffer as ArrayBuffer,
    fresh: fresh.buffer as ArrayBuffer,
    chunks,
    size: signed.size,
    sha1: fileDigests ? sha1.digest() : new Uint8Array(0),
    sha256: fileDigests ? sha256.digest() : new Uint8Array(0),
    crc32: crc >>> 0,
    identifier: signed.identifier,
    cdhashes: signed.slices.map((s) => (s.codeDirectories[0]?.digest.subarray(0, 20).toString('hex') ?? '')),
    headLength: signed.headLength,
  };
}

/**
 * The CRC-32 of the input's code that the signed file keeps, from the input's own CRC-32: a thin
 * file keeps one run of it, between the old header and the old signature, which are small; their
 * CRC-32s and the whole's give the middle's (crc32-combine.ts). The bytes of the run are not read
 * again. Nothing relies on this further than on a CRC-32 computed here: verification checks the
 * output's CRC-32 against the bytes it reads back. Undefined when no single run is worth it (a fat
 * file keeps a run per slice).
 */
function keptCodeCrc(chunks: readonly Buffer[], input: Buffer, inputCrc: number): { chunk: Buffer; crc: number } | undefined {
  const views = chunks.filter((chunk) => chunk.buffer === input.buffer);
  if (views.length !== 1) return undefined;
  const chunk = views[0]!;
  const start = chunk.byteOffset - input.byteOffset;
  const end = start + chunk.length;
  if (start < 0 || end > input.length || start + (input.length - end) >= chunk.length) return undefined;
  return { chunk, crc: crc32Middle(inputCrc, crc32(input.subarray(0, start)), crc32(input.subarray(end)), chunk.length, input.length - end) };
}

/** The signed file as Buffers (views of the two transferred ArrayBuffers). */
export function resultChunks(result: MachOJobResult): Buffer[] {
  return result.chunks.map((c) => Buffer.from(c.source === 'input' ? result.input : result.fresh, c.offset, c.length));
}

// One CodeSigner per identity and signing time: making one orders and checks the chain
// (certificate parsing, signature verification), which need not be redone for every file of an
// app. (A worker receives a fresh copy of the identity per job, so it simply misses.)
const signers = new WeakMap<Identity, { time: number; signer: CodeSigner }>();

function codeSignerFor(identity: Identity, signingTime: Date): CodeSigner {
  const cached = signers.get(identity);
  if (cached !== undefined && cached.time === signingTime.getTime()) return cached.signer;
  const signer = identityCodeSigner(rehydrate(identity), { signingTime });
  signers.set(identity, { time: signingTime.getTime(), signer });
  return signer;
}

// Structured clone turns Buffers into Uint8Arrays; the CMS code relies on Buffer methods.
function rehydrate(identity: Identity): Identity {
  const buf = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));
  return { ...identity, certificate: buf(identity.certificate), chain: identity.chain.map(buf) };
}
