// Large Mach-O files in the re-signer: opened from their zip entry without being read whole, and
// signed while the zip writer pulls their bytes through (codesign/sign-stream.ts), so an 80 MiB
// executable costs a few MiB of memory instead of 80. Their digests (for a parent bundle's seal)
// and CodeDirectory hashes exist only once the entry has been written.
import { SigningError } from '../../errors.ts';
import type { ZipEntry, ZipReader, ZipWriter } from '../../zip/index.ts';
import { openMachOStream, streamingSigner, type MachOStream } from '../codesign/index.ts';
import { signOptionsOf, type MachOJob } from './macho-job.ts';
import type { ResignedBundle } from './options.ts';
import { entryStyle, piecesOptions } from './output.ts';
import type { FileRecord } from './scan.ts';
import { entryStreamInput } from './stream-entry.ts';

/**
 * Opens an entry of at least `streamAbove` bytes; undefined for smaller, fat or unreadable ones
 * (signed in memory). `oldSignature`: whether its identifier or entitlements will be carried over.
 */
export async function openStream(zip: ZipReader, entry: ZipEntry, streamAbove: number, oldSignature: boolean): Promise<MachOStream | undefined> {
  if (entry.uncompressedSize < streamAbove) return undefined;
  try {
    return await openMachOStream(entryStreamInput(zip, entry), { oldSignature });
  } catch (error) {
    // A damaged file takes the in-memory path, which reports it in the established terms.
    if (error instanceof SigningError) return undefined;
    throw error;
  }
}

export interface StreamedTarget {
  report: ResignedBundle;
  /** Where the signed file's digests go once written (when a parent bundle seals it). */
  records: Map<string, FileRecord>;
  signingTime: Date;
  /** Deflate level for entries that stay deflated (default 6). */
  level: number | undefined;
  /** Awaited once the code is written, before the signature is built (see streamingSigner). */
  beforeSignature?: () => Promise<void>;
  /**
   * For a file opened without its old signature (which the stream brings last): the job as
   * signed, decided from the stand-in holding that signature once the code has streamed past
   * (the carried-over entitlements). The job given to streamedWrite fixes a provisional layout.
   */
  jobAtEnd?: (standIn: Buffer) => MachOJob;
}

/**
 * The write step of a streamed file. The layout is fixed now (with `jobAtEnd`, all of it but the
 * signature's size), so layout errors (no room for LC_CODE_SIGNATURE, …) surface with the job,
 * not halfway through the archive.
 */
export function streamedWrite(entry: ZipEntry, stream: MachOStream, signing: MachOJob, target: StreamedTarget): (writer: ZipWriter) => Promise<void> {
  const sealed = signing.sealed ?? true;
  const { jobAtEnd } = target;
  const signer = streamingSigner(stream, signOptionsOf(signing), {
    fileDigests: sealed ? ['sha1', 'sha256'] : [],
    ...(target.beforeSignature === undefined ? {} : { beforeSignature: target.beforeSignature }),
    ...(jobAtEnd === undefined ? {} : { layoutAtEnd: (standIn: Buffer) => signOptionsOf(jobAtEnd(standIn)) }),
  });
  const style = entryStyle(entry, target.signingTime);
  return async (writer) => {
    // Zip64 is reserved up front if the size needs it; CRC and sizes (and, with `jobAtEnd`, the
    // header, written as zeros until the signature is built) are patched in place once written
    // (DataSink.writeAt). Deflated, the header is stored ahead of the pieces either way, as the
    // in-memory path stores it (output.ts compressLargeEntry): both give the same archive.
    await writer.addEntry(entry.name, signer.chunks(), {
      method: style.method,
      level: style.level ?? target.level ?? 6,
      alignment: 1,
      size: signer.size,
      // Over both cores, at level 1 where that keeps the input's ratio (zip/deflate-pieces.ts).
      ...(style.method === 'deflate' ? { pieces: { ...piecesOptions(style, target.level), storedHead: signer.headLength } } : {}),
      ...(jobAtEnd === undefined ? {} : { provisionalHead: { length: signer.headLength, final: signer.head } }),
      ...style.attributes,
    });
    const cdhashes = signer.codeDirectories!.map((cd) => cd.digest.subarray(0, 20).toString('hex'));
    target.report.code.push({ path: entry.name, identifier: signer.identifier, cdhashes });
    if (sealed) target.records.set(entry.name, { kind: 'file', sha1: signer.digests!.get('sha1')!, sha256: signer.digests!.get('sha256')! });
  };
}
