// Incremental per-device re-signing, step 1: turn a prepared build (the whole app signed with the
// final identity and a template profile, src/signing/ios/resign) into
//   - a SHARED FILE: every zip entry that no profile changes, copied raw, followed by the main
//     executable's local header and the deflate stream of its bytes up to its first code
//     signature — identical for every device, so stored once;
//   - an in-memory TEMPLATE of what a profile does change (SPECIFICATION.md in this folder):
//     per "dirty" bundle (a provisioned bundle or an ancestor of one) its CodeResources plist,
//     its executable's signature SuperBlobs and the bytes after the first one, and the CRC-32,
//     SHA-1 and SHA-256 states of the bytes before it.
// The main executable's entry uses a data descriptor (APPNOTE 4.3.9, general purpose bit 3): its
// local header then holds no CRC or sizes and is device-independent, and its deflate stream is
// split by a full flush (RFC 1951 §3.2.4 stored block; zlib Z_FULL_FLUSH resets the window) so
// the prefix's compressed bytes are valid for any tail.
import { createHash, type Hash } from 'node:crypto';
import { constants as zlibConstants, crc32, deflateRawSync } from 'node:zlib';
import { SigningError } from '../../errors.ts';
import type { DataSink } from '../../data-sink.ts';
import type { DataSource } from '../../data-source.ts';
import { parsePlist, type PlistDict, type PlistFormat } from '../../plist/index.ts';
import { ZipReader, ZipWriter, type ZipEntry } from '../../zip/index.ts';
import { FLAG_DATA_DESCRIPTOR, FLAG_UTF8, METHOD_DEFLATED } from '../../zip/format.ts';
import { buildLocalHeader, VERSION_DEFAULT } from '../../zip/headers.ts';
import { CODE_RESOURCES_FILE, discoverLayout, isProvisioned, PROFILE_FILE, type BundleNode } from '../bundle/index.ts';
import { parseSuperBlob, type SuperBlobEntry } from '../codesign/super-blob.ts';
import { codeSignatureCommand } from '../macho/inspect.ts';
import { parseMachO } from '../macho/parse.ts';
import { existingEntitlements, signerCertificate } from '../resign/existing-signature.ts';

/** How a rewritten entry is written: the prepared build's metadata, kept. */
export interface EntryMeta {
  name: string;
  nameBytes: Buffer;
  flags: number;
  method: number;
  dosTime: number;
  dosDate: number;
  versionMadeBy: number;
  externalAttributes: number;
}

export interface SignatureSite {
  /** Offset of the slice's SuperBlob in the executable file (fat: slice offset included). */
  offset: number;
  /** LC_CODE_SIGNATURE datasize: room the new SuperBlob must fit in (zero-padded). */
  size: number;
  entries: SuperBlobEntry[];
}

export interface TemplateExecutable {
  meta: EntryMeta;
  size: number;
  /** Bytes before the first SuperBlob: unchanged by any profile. */
  prefixLength: number;
  prefixCrc: number;
  prefixSha1: Hash;
  prefixSha256: Hash;
  /** Deflated prefix ending in a full flush; null when it lives in the shared file (main app). */
  compressedPrefix: Buffer | null;
  compressedPrefixLength: number;
  /** The main executable's local header offset in the shared file; null for others. */
  sharedHeaderOffset: number | null;
  /** The bytes from prefixLength to the end (signatures and, in fat files, later slices). */
  tail: Buffer;
  sites: SignatureSite[];
}

export interface TemplateBundle {
  /** Zip path of the bundle directory ("Payload/A.app/…/"). */
  dir: string;
  bundleId: string;
  executableName: string;
  provisioned: boolean;
  /** Dirty bundles directly inside this one (their changed files are sealed here). */
  children: TemplateBundle[];
  profileMeta: EntryMeta | null;
  codeResources: { meta: EntryMeta; plist: PlistDict; format: PlistFormat };
  executable: TemplateExecutable;
  /** Entitlements the prepared build's executable was signed with (first slice). */
  entitlements: PlistDict | undefined;
}

export interface IncrementalTemplate {
  /** Bytes of the shared file; per-device parts start at this offset. */
  sharedSize: number;
  /** Central directory records of the entries in the shared file, in file order. */
  sharedRecords: Buffer[];
  /** Dirty bundles, children before parents (signing order). */
  bundles: TemplateBundle[];
  /** Deflate level for rewritten executables. */
  level: number;
  /** The certificate the prepared build was signed with (DER): per-device signing must use it. */
  signerCertificate: Buffer | undefined;
}

export interface BuildTemplateOptions {
  /** Deflate level of executables (default 6, the re-signer's). */
  level?: number;
  signal?: AbortSignal;
}

const metaOf = (entry: ZipEntry): EntryMeta => ({
  name: entry.name,
  nameBytes: entry.nameBytes,
  flags: entry.flags & FLAG_UTF8,
  method: entry.method,
  dosTime: entry.dosTime,
  dosDate: entry.dosDate,
  versionMadeBy: entry.versionMadeBy,
  externalAttributes: entry.externalAttributes,
});

/** Reads the prepared build, writes the shared file to `sharedSink`, returns the template. */
export async function buildIncrementalTemplate(prepared: DataSource, sharedSink: DataSink, options: BuildTemplateOptions = {}): Promise<IncrementalTemplate> {
  const level = options.level ?? 6;
  const zip = await ZipReader.open(prepared);
  const layout = await discoverLayout(zip);
  const dirty = new Set<BundleNode>();
  for (const bundle of layout.postOrder) {
    if (!isProvisioned(bundle)) continue;
    for (let b: BundleNode | undefined = bundle; b !== undefined; b = b.parent) dirty.add(b);
  }
  if (!dirty.has(layout.main)) throw new SigningError('incremental_template_mismatch', 'The main app is not provisioned; nothing depends on a profile.');
  const changed = new Set<string>();
  for (const bundle of dirty) {
    changed.add(bundle.dir + CODE_RESOURCES_FILE).add(bundle.executableEntry.name);
    if (isProvisioned(bundle)) changed.add(bundle.dir + PROFILE_FILE);
  }

  const writer = new ZipWriter(sharedSink);
  const sharedRecords: Buffer[] = [];
  for (const entry of zip.entriesInFileOrder()) {
    if (changed.has(entry.name)) continue;
    options.signal?.throwIfAborted();
    sharedRecords.push((await writer.addRaw(entry, zip, { alignment: 'none' })).centralRecord);
  }

  let signer: Buffer | undefined;
  const byNode = new Map<BundleNode, TemplateBundle>();
  const bundles: TemplateBundle[] = [];
  for (const node of layout.postOrder) {
    if (!dirty.has(node)) continue;
    options.signal?.throwIfAborted();
    const isMain = node === layout.main;
    const { executable, entitlements, certificate } = await templateExecutable(zip, node.executableEntry, level);
    if (isMain) signer = certificate;
    if (isMain) {
      // Device-independent: bit 3 set, CRC and sizes left to the data descriptor (APPNOTE 4.4.4).
      const meta = executable.meta;
      executable.sharedHeaderOffset = sharedSink.position;
      const header = buildLocalHeader({
        versionNeeded: VERSION_DEFAULT,
        flags: meta.flags | FLAG_DATA_DESCRIPTOR,
        method: METHOD_DEFLATED,
        dosTime: meta.dosTime,
        dosDate: meta.dosDate,
        crc32: 0,
        compressedSize: 0,
        uncompressedSize: 0,
        nameBytes: meta.nameBytes,
        extra: Buffer.alloc(0),
      });
      await writer.writeBytes(header);
      await writer.writeBytes(executable.compressedPrefix!);
      executable.compressedPrefix = null;
    }
    const crEntry = zip.getEntry(node.dir + CODE_RESOURCES_FILE);
    if (crEntry === undefined) throw new SigningError('incremental_template_mismatch', `${node.dir} has no ${CODE_RESOURCES_FILE}`);
    const parsed = parsePlist(await zip.readEntry(crEntry));
    if (parsed.value.type !== 'dict') throw new SigningError('incremental_template_mismatch', `${crEntry.name} is not a dictionary`);
    const profileEntry = isProvisioned(node) ? zip.getEntry(node.dir + PROFILE_FILE) : undefined;
    const bundle: TemplateBundle = {
      dir: node.dir,
      bundleId: node.bundleId,
      executableName: node.executable,
      provisioned: isProvisioned(node),
      children: node.children.filter((c) => dirty.has(c)).map((c) => byNode.get(c)!),
      profileMeta: profileEntry ? metaOf(profileEntry) : null,
      codeResources: { meta: metaOf(crEntry), plist: parsed.value, format: parsed.format },
      executable,
      entitlements,
    };
    byNode.set(node, bundle);
    bundles.push(bundle);
  }
  return { sharedSize: sharedSink.position, sharedRecords, bundles, level, signerCertificate: signer };
}

async function templateExecutable(zip: ZipReader, entry: ZipEntry, level: number): Promise<{ executable: TemplateExecutable; entitlements: PlistDict | undefined; certificate: Buffer | undefined }> {
  const bytes = await zip.readEntry(entry, entry.uncompressedSize + 1);
  const file = parseMachO(bytes);
  const slices = file.kind === 'thin' ? [file.slice] : file.slices;
  const sites: SignatureSite[] = slices.map((slice) => {
    const command = codeSignatureCommand(slice);
    if (command === undefined) throw new SigningError('incremental_template_mismatch', `${entry.name} is not signed`);
    const offset = slice.data.byteOffset - bytes.byteOffset + command.dataoff;
    return { offset, size: command.datasize, entries: parseSuperBlob(bytes.subarray(offset, offset + command.datasize)) };
  });
  const prefixLength = Math.min(...sites.map((s) => s.offset));
  const prefix = bytes.subarray(0, prefixLength);
  // An entry the prepared build stored (incompressible code) keeps costing nothing: level 0
  // writes deflate stored blocks, still self-delimiting for streaming unzippers.
  const compressedPrefix = deflateRawSync(prefix, { level: entry.method === 0 ? 0 : level, finishFlush: zlibConstants.Z_FULL_FLUSH });
  return {
    executable: {
      meta: metaOf(entry),
      size: bytes.length,
      prefixLength,
      prefixCrc: crc32(prefix),
      prefixSha1: createHash('sha1').update(prefix),
      prefixSha256: createHash('sha256').update(prefix),
      compressedPrefix,
      compressedPrefixLength: compressedPrefix.length,
      sharedHeaderOffset: null,
      tail: Buffer.from(bytes.subarray(prefixLength)),
      sites,
    },
    entitlements: existingEntitlements(bytes),
    certificate: signerCertificate(bytes),
  };
}
