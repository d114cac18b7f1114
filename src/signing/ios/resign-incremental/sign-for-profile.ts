// Incremental per-device re-signing, step 2: the bytes that follow the shared file for one
// provisioning profile (SPECIFICATION.md in this folder). Per dirty bundle, leaf-first:
//   embedded.mobileprovision  ← the profile;
//   _CodeSignature/CodeResources ← the template's seal with the digests of the changed files
//                                  (the profile, and dirty child bundles' profile, seal and
//                                  executable) replaced;
//   executable signature      ← each CodeDirectory with special slot 3 (CodeResources, cs_blobs.h
//                                CSSLOT_RESOURCEDIR) set to the new seal's digest, then a new CMS
//                                over them; page hashes, requirements and entitlements are the
//                                template's, because the code and the entitlements do not change;
// then the central directory. Nothing else is read, hashed or compressed again.
import { crc32, deflateRawSync } from 'node:zlib';
import { verifySignedData, type Identity } from '../../cms/index.ts';
import { SigningError } from '../../errors.ts';
import { plistClone, plistData, plistEqual, writePlist, type PlistDict } from '../../plist/index.ts';
import { DATA_DESCRIPTOR_SIGNATURE, FLAG_DATA_DESCRIPTOR, METHOD_DEFLATED, ZIP64_MARKER_32 } from '../../zip/format.ts';
import { buildCentralRecord, buildEndRecords, buildLocalHeader, needs64, VERSION_DEFAULT, VERSION_ZIP64, withZip64Field } from '../../zip/headers.ts';
import { CODE_RESOURCES_FILE, PROFILE_FILE } from '../bundle/index.ts';
import { wrapBlob } from '../codesign/blob.ts';
import { codeDirectoryDigest, parseCodeDirectory, serializeCodeDirectory } from '../codesign/code-directory.ts';
import { CSMAGIC_BLOBWRAPPER, CSSLOT_CODEDIRECTORY, CSSLOT_RESOURCEDIR, CSSLOT_SIGNATURESLOT, isCodeDirectorySlot } from '../codesign/constants.ts';
import { digest, HASH_SHA1, HASH_SHA256 } from '../codesign/digest.ts';
import { identityCodeSigner } from '../codesign/identity-signer.ts';
import { serializeSuperBlob } from '../codesign/super-blob.ts';
import { checkProfileForSigning, deriveEntitlements, selectProfileForBundle, type ProvisioningProfile } from '../profile/index.ts';
import { patchedSeal, type FileDigests } from './seal-patch.ts';
import { type EntryMeta, type IncrementalTemplate, type TemplateBundle } from './template.ts';

export interface SignForProfileOptions {
  identity: Identity;
  /**
   * The device's profile, or one per provisioned bundle (the app's and each extension's explicit
   * App ID): each bundle takes the profile that covers it most specifically, as a full re-sign does.
   */
  profile: ProvisioningProfile | readonly ProvisioningProfile[];
  /** CMS signingTime (default now). */
  signingTime?: Date;
  now?: Date;
}

export interface DevicePart {
  /** Bytes to append to the shared file, in order. */
  chunks: Buffer[];
  /** Total size of the finished .ipa (shared file + chunks). */
  size: number;
  /** The executables' new code directory hashes, per bundle dir, for reports. */
  cdhashes: Record<string, string[]>;
}

/** A rewritten entry waiting for its turn: everything is computed before the first byte is emitted. */
interface Pending {
  meta: EntryMeta;
  method: number;
  crc: number;
  size: number;
  data: Buffer[];
}

interface Written {
  meta: EntryMeta;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
  dataDescriptor: boolean;
}

const digests = (bytes: Buffer): FileDigests => ({ sha1: digest(HASH_SHA1, bytes), sha256: digest(HASH_SHA256, bytes) });

export function signForProfile(template: IncrementalTemplate, options: SignForProfileOptions): DevicePart {
  const { identity } = options;
  const profiles: readonly ProvisioningProfile[] = Array.isArray(options.profile) ? options.profile : [options.profile as ProvisioningProfile];
  const signingTime = options.signingTime ?? new Date();
  // The shared file keeps the prepared build's signatures of unchanged code: same identity only.
  if (template.signerCertificate === undefined || !template.signerCertificate.equals(identity.certificate)) {
    throw new SigningError('incremental_template_mismatch', 'The prepared build was signed with another certificate.');
  }
  const signer = identityCodeSigner(identity, { signingTime });
  const newDigests = new Map<string, FileDigests>();
  const profileDigests = new Map(profiles.map((p) => [p, digests(p.bytes)]));
  const out: Buffer[] = [];
  const pending: Pending[] = [];
  let main: { exe: Written; tail: Buffer } | null = null;
  let offset = template.sharedSize;
  const emit = (chunk: Buffer) => {
    out.push(chunk);
    offset += chunk.length;
  };
  const cdhashes: Record<string, string[]> = {};

  for (const bundle of template.bundles) {
    let profile: ProvisioningProfile | undefined;
    if (bundle.provisioned) {
      profile = profiles.length === 1 ? profiles[0]! : selectProfileForBundle(profiles, bundle.bundleId, options.now);
      if (profile === undefined) throw new SigningError('bundle_id_mismatch', `No provisioning profile covers "${bundle.bundleId}" (${bundle.dir}).`, { details: { bundleId: bundle.bundleId, path: bundle.dir } });
      // The checks a full re-sign makes (bundle id covered, unexpired, lists the certificate).
      checkProfileForSigning(profile, { bundleId: bundle.bundleId, certificate: identity.certificate, ...(options.now ? { now: options.now } : {}) });
      const derived = deriveEntitlements({ profile, bundleId: bundle.bundleId, ...(bundle.entitlements ? { original: bundle.entitlements } : {}) }).entitlements;
      if (bundle.entitlements === undefined || !plistEqual(derived, bundle.entitlements)) {
        throw new SigningError('incremental_template_mismatch', `The profile grants ${bundle.dir} other entitlements than the prepared build was signed with.`);
      }
      newDigests.set(bundle.dir + PROFILE_FILE, profileDigests.get(profile)!);
    }
    const seal = updatedSeal(bundle, newDigests, profile === undefined ? undefined : profileDigests.get(profile));
    newDigests.set(bundle.dir + CODE_RESOURCES_FILE, digests(seal));

    const exe = bundle.executable;
    const tail = Buffer.from(exe.tail);
    cdhashes[bundle.dir] = [];
    for (const site of exe.sites) {
      const entries = site.entries.map((e) => ({ ...e }));
      const directories: Array<{ hashType: ReturnType<typeof parseCodeDirectory>['hashType']; digest: Buffer }> = [];
      let primary: Buffer | undefined;
      for (const entry of entries) {
        if (!isCodeDirectorySlot(entry.type)) continue;
        const cd = parseCodeDirectory(entry.blob);
        if (cd.specialSlots.length < CSSLOT_RESOURCEDIR) throw new SigningError('incremental_template_mismatch', `${exe.meta.name} seals no resources`);
        cd.specialSlots[CSSLOT_RESOURCEDIR - 1] = digest(cd.hashType, seal);
        const blob = serializeCodeDirectory(cd);
        (entry as { blob: Buffer }).blob = blob;
        const cdDigest = codeDirectoryDigest(blob, cd.hashType);
        directories.push({ hashType: cd.hashType, digest: cdDigest });
        if (entry.type === CSSLOT_CODEDIRECTORY) primary = blob;
        // cs_blobs.h CS_CDHASH_LEN: the cdhash is the digest's first 20 bytes.
        cdhashes[bundle.dir]!.push(cdDigest.subarray(0, 20).toString('hex'));
      }
      const signature = entries.find((e) => e.type === CSSLOT_SIGNATURESLOT);
      if (primary === undefined || signature === undefined || signer.cms === undefined) throw new SigningError('incremental_template_mismatch', `${exe.meta.name} has no CMS-signed CodeDirectory`);
      const cms = signer.cms.sign(primary, directories);
      // Every device build is checked before it leaves: the new CMS must verify over the new
      // CodeDirectory (the unchanged parts were verified once, with the prepared build).
      const verified = verifySignedData(cms, { detachedContent: primary });
      if (!verified.signerCertificate.equals(identity.certificate)) throw new SigningError('code_signature_invalid', `${exe.meta.name}: the new signature names another signer`);
      (signature as { blob: Buffer }).blob = wrapBlob(CSMAGIC_BLOBWRAPPER, cms);
      const superBlob = serializeSuperBlob(entries);
      if (superBlob.length > site.size) throw new SigningError('incremental_template_mismatch', `${exe.meta.name}: the new signature (${superBlob.length} bytes) exceeds the reserved ${site.size}`);
      const at = site.offset - exe.prefixLength;
      tail.fill(0, at, at + site.size);
      superBlob.copy(tail, at);
    }
    newDigests.set(bundle.dir + bundle.executableName, {
      sha1: exe.prefixSha1.copy().update(tail).digest(),
      sha256: exe.prefixSha256.copy().update(tail).digest(),
    });
    const crc = crc32(tail, exe.prefixCrc);
    const compressedTail = deflateRawSync(tail, { level: exe.meta.method === 0 ? 0 : template.level });

    if (exe.sharedHeaderOffset !== null) {
      const compressedSize = exe.compressedPrefixLength + compressedTail.length;
      if (needs64(compressedSize) || needs64(exe.size)) throw new SigningError('incremental_template_mismatch', `${exe.meta.name} is too large for a 32-bit data descriptor`);
      main = { exe: { meta: { ...exe.meta, method: METHOD_DEFLATED }, crc, compressedSize, size: exe.size, offset: exe.sharedHeaderOffset, dataDescriptor: true }, tail: compressedTail };
    } else {
      pending.push({ meta: exe.meta, method: METHOD_DEFLATED, crc, size: exe.size, data: [exe.compressedPrefix!, compressedTail] });
    }
    if (profile !== undefined && bundle.profileMeta) pending.push(small(bundle.profileMeta, profile.bytes));
    pending.push(small(bundle.codeResources.meta, seal));
  }
  if (main === null) throw new SigningError('incremental_template_mismatch', 'The template has no main executable in its shared file.');

  // The main executable continues the shared file: its tail stream, then the data descriptor
  // (APPNOTE 4.3.9: signature, CRC-32, compressed and uncompressed sizes; 32-bit sizes here).
  emit(main.tail);
  const descriptor = Buffer.alloc(16);
  descriptor.writeUInt32LE(DATA_DESCRIPTOR_SIGNATURE, 0);
  descriptor.writeUInt32LE(main.exe.crc >>> 0, 4);
  descriptor.writeUInt32LE(main.exe.compressedSize, 8);
  descriptor.writeUInt32LE(main.exe.size, 12);
  emit(descriptor);
  const written: Written[] = [main.exe, ...pending.map((p) => entry(p.meta, p.method, p.crc, p.size, p.data))];

  function small(meta: EntryMeta, bytes: Buffer): Pending {
    const compressed = meta.method === METHOD_DEFLATED ? deflateRawSync(bytes, { level: template.level }) : bytes;
    return { meta, method: meta.method, crc: crc32(bytes), size: bytes.length, data: [compressed] };
  }

  function entry(meta: EntryMeta, method: number, crc: number, size: number, data: Buffer[]): Written {
    const compressedSize = data.reduce((n, b) => n + b.length, 0);
    const sizes64 = needs64(size) || needs64(compressedSize);
    const start = offset;
    emit(
      buildLocalHeader({
        versionNeeded: sizes64 ? VERSION_ZIP64 : VERSION_DEFAULT,
        flags: meta.flags,
        method,
        dosTime: meta.dosTime,
        dosDate: meta.dosDate,
        crc32: crc,
        compressedSize: sizes64 ? ZIP64_MARKER_32 : compressedSize,
        uncompressedSize: sizes64 ? ZIP64_MARKER_32 : size,
        nameBytes: meta.nameBytes,
        extra: sizes64 ? withZip64Field(Buffer.alloc(0), [size, compressedSize]) : Buffer.alloc(0),
      }),
    );
    for (const chunk of data) emit(chunk);
    return { meta: { ...meta, method }, crc, compressedSize, size, offset: start, dataDescriptor: false };
  }

  const records = [...template.sharedRecords, ...written.map(centralRecord)];
  const cdOffset = offset;
  const directory = Buffer.concat(records);
  emit(directory);
  emit(buildEndRecords({ entryCount: records.length, centralDirectoryOffset: cdOffset, centralDirectorySize: directory.length, comment: Buffer.alloc(0), allowZip64: true }));
  return { chunks: out, size: offset, cdhashes };
}

/** The bundle's CodeResources with the digests of the files a profile changes replaced. */
function updatedSeal(bundle: TemplateBundle, fresh: Map<string, FileDigests>, profile: FileDigests | undefined): Buffer {
  const changed = new Map<string, FileDigests>();
  if (profile !== undefined) changed.set(PROFILE_FILE, profile);
  for (const child of bundle.children) {
    const relative = child.dir.slice(bundle.dir.length);
    for (const name of [PROFILE_FILE, CODE_RESOURCES_FILE, child.executableName]) {
      const value = fresh.get(child.dir + name);
      if (value) changed.set(relative + name, value);
    }
  }
  return patchedSeal(bundle, changed, (digests) => renderSeal(bundle, digests));
}

function renderSeal(bundle: TemplateBundle, changed: ReadonlyMap<string, FileDigests>): Buffer {
  const plist = plistClone(bundle.codeResources.plist);
  for (const key of ['files', 'files2']) {
    const table = plist.value.get(key);
    if (table?.type !== 'dict') continue;
    for (const [path, digestsOf] of changed) {
      const current = table.value.get(path);
      if (current === undefined) continue;
      // `files`: data (SHA-1) or {hash, optional}; `files2`: {hash (SHA-1)?, hash2 (SHA-256)}.
      if (current.type === 'data') table.value.set(path, plistData(digestsOf.sha1));
      else if (current.type === 'dict') {
        if (current.value.has('hash')) current.value.set('hash', plistData(digestsOf.sha1));
        if (current.value.has('hash2')) current.value.set('hash2', plistData(digestsOf.sha256));
      }
    }
  }
  return writePlist(plist as PlistDict, bundle.codeResources.format);
}

function centralRecord(entry: Written): Buffer {
  const sizes64 = needs64(entry.size) || needs64(entry.compressedSize);
  const offset64 = needs64(entry.offset);
  const values = [...(sizes64 ? [entry.size, entry.compressedSize] : []), ...(offset64 ? [entry.offset] : [])];
  return buildCentralRecord({
    versionMadeBy: entry.meta.versionMadeBy,
    versionNeeded: sizes64 || offset64 ? VERSION_ZIP64 : VERSION_DEFAULT,
    flags: entry.meta.flags | (entry.dataDescriptor ? FLAG_DATA_DESCRIPTOR : 0),
    method: entry.meta.method,
    dosTime: entry.meta.dosTime,
    dosDate: entry.meta.dosDate,
    crc32: entry.crc,
    compressedSize: sizes64 ? ZIP64_MARKER_32 : entry.compressedSize,
    uncompressedSize: sizes64 ? ZIP64_MARKER_32 : entry.size,
    nameBytes: entry.meta.nameBytes,
    extra: values.length > 0 ? withZip64Field(Buffer.alloc(0), values) : Buffer.alloc(0),
    internalAttributes: 0,
    externalAttributes: entry.meta.externalAttributes,
    localHeaderOffset: offset64 ? ZIP64_MARKER_32 : entry.offset,
    comment: Buffer.alloc(0),
  });
}
