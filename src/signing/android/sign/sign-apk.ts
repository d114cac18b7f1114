// Re-signing an APK, modelled on apksig ApkSigner.sign + DefaultApkSignerEngine: storage-agnostic
// (a DataSource in, a DataSink out), streaming (each entry is read once and copied raw, never
// recompressed), byte-identical to apksigner for the same key, schemes and alignment.
//   1. keep every input entry except directories, old JAR signature files and the source stamp,
//      in local-header order, realigning stored entries that move (alignment.ts);
//   2. v1: append <NAME>.SF, <NAME>.RSA|EC and MANIFEST.MF (deflated as zlib level 9 does);
//   3. v2/v3: pad to 4096, hash entries + central directory + EoCD while writing, then insert the
//      APK Signing Block before the central directory and point the EoCD at it.
import { X509Certificate, createPublicKey } from 'node:crypto';
import type { Identity } from '../../cms/identity.ts';
import { signJarSignatureBlock } from '../../cms/jar-signature.ts';
import type { DataSink } from '../../data-sink.ts';
import type { DataSource } from '../../data-source.ts';
import { SigningError } from '../../errors.ts';
import { collectBetweenPhases } from '../../reclaim.ts';
import { DEFAULT_ALIGNMENT, realignedExtra } from '../../zip/alignment.ts';
import { LOCAL_HEADER_SIZE } from '../../zip/format.ts';
import { withLocalHeaderOffset } from '../../zip/headers.ts';
import type { ZipEntry } from '../../zip/index.ts';
import { algorithmForKey } from '../algorithms.ts';
import { isDroppedOnResign, isDroppedUnread, openApk, readManifestFacts, type OpenedApk } from '../apk/open.ts';
import { buildSigningBlock, paddingBeforeBlock } from '../block/build.ts';
import { SCHEME_ID_V2, SCHEME_ID_V3 } from '../block/constants.ts';
import { CHUNK_SIZE, ChunkedDigester, isChunkedAlgorithm, type ContentPrefix } from '../content-digest.ts';
import { jarDigestFor, MANIFEST_ENTRY_NAME, safeSignerName, type JarDigest } from '../v1/entries.ts';
import { buildManifest, buildSignatureFile, v1Files } from '../v1/sign.ts';
import { zlibDeflateRawLevel9 } from '../v1/zlib-deflate.ts';
import { certificateSha256 } from '../verify/certificates.ts';
import type { WrittenEntryDigest } from '../verify/content-pass.ts';
import { digestAlgorithmsFor, prepareRotation, schemePairs, type KeyRotation } from './apk-signatures.ts';
import { DigestThread } from './digest-thread.ts';
import { InProcessDigests, type EntryDigestPass } from './entry-digest.ts';
import { OutputWriter } from './output.ts';
import { SequentialReader, type BlockLease } from './sequential-reader.ts';
import { describeDeflated, modifiedEocd, newCentralRecord, newLocalHeader, setEocdCentralDirectoryOffset } from './zip-records.ts';

export interface ApkSchemes {
  readonly v1: boolean;
  readonly v2: boolean;
  readonly v3: boolean;
}

export interface SignApkOptions {
  /** Key, certificate and chain (src/signing/cms loadIdentity). */
  readonly identity: Identity;
  /** v1 signature file base name before sanitising (apksigner: key alias or key file name). */
  readonly v1SignerName: string;
  /** Default: all three, as apksigner signs whatever the minSdk. */
  readonly schemes?: ApkSchemes;
  /** Overrides the manifest's minSdkVersion (apksigner --min-sdk-version). */
  readonly minSdk?: number;
  /** Page alignment of stored .so files that move: 4096 (apksigner <= 34) or 16384. */
  readonly libraryPageAlignment?: 4096 | 16384;
  /** Stops the work between entries (the task was canceled). */
  readonly signal?: AbortSignal;
  /** Key rotation: v3 (or v3.1) proves the move from `previous` to `identity` (SPECIFICATION.md §6). */
  readonly rotation?: KeyRotation;
  /** APK size from which the v1 entry digests are taken on a thread of their own (digest-thread.ts); default 16 MiB. */
  readonly digestThreadAbove?: number;
  /**
   * The caller verifies the output next (verifyApk with `written`): with a digest thread and a
   * file sink, take the content digest of the output's start meanwhile (SignApkResult.readBack).
   */
  readonly readBackForVerification?: boolean;
}

export interface SignApkResult {
  readonly schemes: ApkSchemes;
  readonly minSdk: number;
  readonly v1Digest: JarDigest | null;
  readonly v1SignerName: string | null;
  readonly signatureAlgorithm: string;
  readonly outputSize: number;
  readonly entries: number;
  /** Input entries not carried over (old signature files, directories, source stamp). */
  readonly dropped: readonly string[];
  /** v1 digests of the entries as written, by name, for verifyApk's `written` option (empty without v1). */
  readonly written: ReadonlyMap<string, WrittenEntryDigest>;
  /** Content digest chunks of the output's start, read back from the file (verifyApk's `readBack`); null when not taken. */
  readonly readBack: ContentPrefix | null;
  readonly certificate: { readonly sha256: string; readonly subject: string; readonly notAfter: Date; readonly expired: boolean };
}

const DEFAULT_SCHEMES: ApkSchemes = { v1: true, v2: true, v3: true };
// DOS date 2009-01-01, time 00:00 (apksig: new entries when no input entry has a date).
const DEFAULT_DOS_DATE = 0x3a21;
// Below this, starting a thread (~30 ms of CPU) costs more than it saves (digest-thread.ts).
const DIGEST_THREAD_ABOVE = 16 * 1024 * 1024;

export async function signApk(source: DataSource, sink: DataSink, options: SignApkOptions): Promise<SignApkResult> {
  const schemes = options.schemes ?? DEFAULT_SCHEMES;
  if (!schemes.v1 && !schemes.v2 && !schemes.v3) throw new SigningError('apk_invalid', 'at least one signature scheme (v1, v2, v3) must be enabled');
  const key: SigningKey = { certificate: parseCertificate(options.identity.certificate), algorithm: algorithmForKey(options.identity.privateKey) };
  if (!key.certificate.publicKey.equals(createPublicKey(options.identity.privateKey))) {
    throw new SigningError('key_certificate_mismatch', 'the private key does not belong to the signing certificate');
  }
  // The v1 digest thread starts first, so that it loads while the APK is opened.
  const thread = schemes.v1 && source.size >= (options.digestThreadAbove ?? DIGEST_THREAD_ABOVE) ? new DigestThread() : null;
  try {
    return await signWith(source, sink, options, schemes, key, thread);
  } finally {
    await thread?.close();
  }
}

/** The signing certificate and signature algorithm, checked against the key. */
interface SigningKey {
  readonly certificate: X509Certificate;
  readonly algorithm: ReturnType<typeof algorithmForKey>;
}

async function signWith(source: DataSource, sink: DataSink, options: SignApkOptions, schemes: ApkSchemes, { certificate, algorithm }: SigningKey, thread: DigestThread | null): Promise<SignApkResult> {
  const { identity } = options;
  // Entries that are dropped unread do not decide whether the APK can be signed (apk/open.ts).
  const apk = await openApk(source, { discarded: isDroppedUnread });
  const minSdk = options.minSdk ?? (await readManifestFacts(apk)).minSdk;
  // With rotation, v1 (and v2) keep the previous key: older platforms know only that one.
  const v1Identity = options.rotation?.previous ?? identity;
  const v1Digest = schemes.v1 ? jarDigestFor(v1Identity.privateKey.asymmetricKeyType ?? 'unknown', minSdk) : null;
  const signerName = schemes.v1 ? safeSignerName(options.v1SignerName) : null;
  const rotation = options.rotation === undefined ? null : prepareRotation(options.rotation, identity);
  if (rotation !== null && !schemes.v3) throw new SigningError('apk_invalid', 'key rotation needs the v3 scheme');
  const digestAlgorithms = [...digestAlgorithmsFor(identity, rotation)].filter(isChunkedAlgorithm);
  const digester = schemes.v2 || schemes.v3 ? new ChunkedDigester(digestAlgorithms) : null;
  const out = new OutputWriter(sink, digester);

  const digests = v1Digest === null ? null : (thread ?? new InProcessDigests());
  const copied = await copyEntries(apk, out, v1Digest, digests, thread, options.libraryPageAlignment ?? 4096, options.signal);
  const centralRecords = copied.centralRecords;
  // The thread reads the entries already in the output file back for the verification's content
  // digest while this thread writes the rest (digest-thread.ts readBack).
  const file = sink.file;
  const flushed = file === undefined ? 0 : file.flushed - (file.flushed % CHUNK_SIZE);
  const readBack = options.readBackForVerification === true && thread !== null && digester !== null && flushed > 0 ? thread.readBack(file!.path, flushed, digestAlgorithms) : null;
  readBack?.catch(() => {}); // awaited below
  // Without a read-back the thread's work is done: its memory goes now.
  if (readBack === null) await thread?.close();
  // The copy's read blocks and the small entries' inflation streams are garbage now (reclaim.ts).
  collectBetweenPhases();

  if (schemes.v1) {
    const inputManifestEntry = apk.zip.getEntry(MANIFEST_ENTRY_NAME);
    const inputManifest = inputManifestEntry === undefined ? null : await apk.zip.readEntry(inputManifestEntry, 16 * 1024 * 1024);
    const manifest = buildManifest(copied.entryDigests, v1Digest!, inputManifest);
    const apkSchemeIds = [...(schemes.v2 ? [SCHEME_ID_V2] : []), ...(schemes.v3 ? [SCHEME_ID_V3] : [])];
    const sf = buildSignatureFile(manifest, v1Digest!, apkSchemeIds);
    const block = signJarSignatureBlock({ signatureFile: sf, digestAlgorithm: v1Digest!, signer: v1Identity });
    const extension = v1Identity.privateKey.asymmetricKeyType === 'ec' ? 'EC' : 'RSA';
    for (const file of v1Files(signerName!, extension, manifest, sf, block)) {
      const deflated = describeDeflated(file.name, file.data, zlibDeflateRawLevel9(file.data));
      centralRecords.push(newCentralRecord(deflated, copied.dosTime, copied.dosDate, out.offset));
      await out.write(newLocalHeader(deflated, copied.dosTime, copied.dosDate));
      await out.write(deflated.compressed);
    }
  }
  const centralDirectory = Buffer.concat(centralRecords);
  if (centralRecords.length > 0xffff) throw new SigningError('zip_unsupported', `${centralRecords.length} entries need Zip64, which APKs cannot use`);
  if (digester === null) {
    const eocd = modifiedEocd(apk.zip.geometry.eocd, centralRecords.length, centralDirectory.length, out.offset);
    await out.write(centralDirectory);
    await out.write(eocd);
  } else {
    // apksig generateApkSigningBlockPadding: zero bytes so that the block starts on 4096.
    await out.write(Buffer.alloc(paddingBeforeBlock(out.offset)));
    const blockOffset = out.offset;
    const eocd = modifiedEocd(apk.zip.geometry.eocd, centralRecords.length, centralDirectory.length, blockOffset);
    out.detachDigester();
    digester.endSection();
    digester.update(centralDirectory);
    digester.endSection();
    // The EoCD as it is digested points at the block: that is where the CD "starts" for v2/v3.
    digester.update(eocd);
    const digests = await digester.digests();
    const pairs = schemePairs(schemes, identity, rotation, digests);
    const block = buildSigningBlock(pairs);
    await out.write(block);
    await out.write(centralDirectory);
    await out.write(setEocdCentralDirectoryOffset(eocd, blockOffset + block.length));
  }
  await out.drain();
  if (out.offset > 0xffffffff) throw new SigningError('zip_unsupported', 'the signed APK would exceed 4 GiB, which needs Zip64');
  const readBackPrefix = readBack === null ? null : await readBack;
  await thread?.close();

  return {
    schemes,
    minSdk,
    v1Digest,
    v1SignerName: signerName,
    signatureAlgorithm: algorithm.name,
    outputSize: out.offset,
    entries: centralRecords.length,
    dropped: copied.dropped,
    written: copied.written,
    readBack: readBackPrefix,
    certificate: {
      sha256: certificateSha256(certificate),
      subject: certificate.subject,
      notAfter: new Date(certificate.validTo),
      expired: new Date(certificate.validTo).getTime() < Date.now(),
    },
  };
}

interface CopyResult {
  centralRecords: Buffer[];
  entryDigests: Map<string, Buffer>;
  written: Map<string, WrittenEntryDigest>;
  dropped: string[];
  dosTime: number;
  dosDate: number;
}

/**
 * apksig ApkSigner.sign steps 5-6: copy kept entries (and any bytes between them) in file order.
 * Not ZipWriter.addRaw, although it reproduces apksig's bytes too (the realignment rule and the
 * record builders are shared with it): addRaw reads each entry with its own source reads and
 * waits for every sink write, and offers no view of the raw bytes for the v1 and v2 digests, so
 * they would need a second read. Measured on bench/apk.ts's 191 MiB APK, addRaw alone (no
 * hashing) took 0.46-0.58 s CPU and 1.2-1.4 s wall; the whole of signApk with v2+v3 (this loop
 * hashing as it copies, v1 off) 0.41-0.43 s CPU and ~1.0 s wall.
 */
/** `lease`: the digest thread, when `digests` is it, lends itself the reader's blocks. */
async function copyEntries(apk: OpenedApk, out: OutputWriter, v1Digest: JarDigest | null, digests: EntryDigestPass | null, lease: BlockLease | null, libraryPageAlignment: number, signal: AbortSignal | undefined): Promise<CopyResult> {
  const { zip } = apk;
  const kept = zip.entriesInFileOrder().filter((entry) => !isDroppedOnResign(entry.name));
  digests?.start(kept, v1Digest!);
  let index = 0;
  const dataOffsets = new Map<string, number>();
  const dropped: string[] = [];
  const newRecords = new Map<ZipEntry, Buffer>();
  let dosDate = -1;
  let dosTime = -1;
  const input = new SequentialReader(apk.source, 0, apk.entriesSectionEnd, lease);
  const write = (piece: Buffer): Promise<void> => out.write(piece);
  for (const entry of zip.entriesInFileOrder()) {
    signal?.throwIfAborted();
    if (entry.endOffset > apk.entriesSectionEnd) throw new SigningError('apk_invalid', `entry ${JSON.stringify(entry.name)} runs into the APK Signing Block`);
    // apksig copies whatever lies between records verbatim.
    if (entry.localHeaderOffset > input.position) await input.take(entry.localHeaderOffset - input.position, write);
    if (isDroppedOnResign(entry.name)) {
      dropped.push(entry.name);
      await input.skip(entry.endOffset - input.position);
      continue;
    }
    // apksig: new entries get the newest date/time among the kept ones.
    if (dosDate === -1 || entry.dosDate > dosDate || (entry.dosDate === dosDate && entry.dosTime > dosTime)) {
      dosDate = entry.dosDate;
      dosTime = entry.dosTime;
    }
    const outputOffset = out.offset;
    newRecords.set(entry, outputOffset === entry.localHeaderOffset ? entry.centralRecord : withLocalHeaderOffset(entry.centralRecord, outputOffset));
    // apksig outputInputJarEntryLfhRecord (alignment preserved), shared with the zip writer.
    const extraStart = outputOffset + LOCAL_HEADER_SIZE + entry.nameBytes.length;
    const extra = realignedExtra(entry, outputOffset, extraStart, 'preserve', { storedAlignment: DEFAULT_ALIGNMENT.storedAlignment, libraryPageAlignment });
    if (extra !== null) {
      // APPNOTE 4.3.7: the extra field length is a u16 (an input field plus a large alignment could overflow it).
      if (extra.length > 0xffff) throw new SigningError('zip_unsupported', `realigning ${JSON.stringify(entry.name)} would need an extra field over 65535 bytes`, { details: { name: entry.name } });
      await input.skip(entry.dataOffset - entry.localHeaderOffset);
      const header = Buffer.from(entry.localHeader.subarray(0, extraStart - outputOffset));
      header.writeUInt16LE(extra.length, 28);
      await out.write(header);
      await out.write(extra);
    } else {
      await input.take(entry.dataOffset - entry.localHeaderOffset, write);
    }
    if (digests === null) {
      await input.take(entry.endOffset - entry.dataOffset, write);
      continue;
    }
    // The digests check the CRC-32 (which apksig's signer skips): a damaged entry is refused
    // instead of signed, and the output's verification may use these digests (verify/content-pass.ts).
    const at = index++;
    dataOffsets.set(entry.name, out.offset);
    await input.take(entry.compressedSize, async (piece) => {
      await digests.update(at, piece);
      await out.write(piece);
    });
    await digests.end(at);
    // The data descriptor, if any, is part of the record and copied as is.
    await input.take(entry.endOffset - input.position, write);
  }
  await input.take(apk.entriesSectionEnd - input.position, write);
  // apksig step 6: central directory records in input CD order, not file order.
  const centralRecords: Buffer[] = [];
  for (const entry of zip.entries) {
    const record = newRecords.get(entry);
    if (record !== undefined) centralRecords.push(record);
  }
  if (dosDate === -1) {
    dosDate = DEFAULT_DOS_DATE;
    dosTime = 0;
  }
  const byName = new Map<string, Buffer>();
  const written = new Map<string, WrittenEntryDigest>();
  if (digests !== null) {
    const all = await digests.all();
    kept.forEach((entry, at) => {
      byName.set(entry.name, all[at]!);
      written.set(entry.name, { dataOffset: dataOffsets.get(entry.name)!, compressedSize: entry.compressedSize, algorithm: v1Digest!, digest: all[at]! });
    });
  }
  return { centralRecords, entryDigests: byName, written, dropped, dosTime, dosDate };
}

function parseCertificate(der: Buffer): X509Certificate {
  try {
    return new X509Certificate(der);
  } catch (cause) {
    throw new SigningError('certificate_invalid', 'the signing certificate cannot be parsed as X.509', { cause });
  }
}
