// Signs one Mach-O slice: reserve the signature area, hash the pages, build the CodeDirectories,
// requirements, entitlements and CMS, and append the SuperBlob. The order matters: page 0 holds
// the edited load commands, so the layout is fixed (with an exact size) before anything is hashed.
import { SigningError } from '../../errors.ts';
import { MH_EXECUTE } from '../macho/constants.ts';
import { buildSliceChunks } from '../macho/build.ts';
import { SIGNATURE_ALIGNMENT, align, codeEnd, withSignatureSpace } from '../macho/edit.ts';
import { findSegment, minimumOS } from '../macho/inspect.ts';
import type { MachOSlice } from '../macho/types.ts';
import { wrapBlob } from './blob.ts';
import { codeDirectoryDigest, codeDirectorySize, serializeCodeDirectory, type CodeDirectory, type ExecSegment } from './code-directory.ts';
import {
  APPLE_CMS_RESERVE, CD_VERSION_EXECSEG, CD_VERSION_RUNTIME, CD_VERSION_SCATTER, CD_VERSION_TEAMID, CSMAGIC_BLOBWRAPPER,
  CSSLOT_ALTERNATE_CODEDIRECTORIES, CSSLOT_CODEDIRECTORY, CSSLOT_DER_ENTITLEMENTS, CSSLOT_ENTITLEMENTS, CSSLOT_INFOSLOT,
  CSSLOT_REQUIREMENTS, CSSLOT_RESOURCEDIR, CSSLOT_SIGNATURESLOT, CS_ADHOC, CS_EXECSEG_MAIN_BINARY,
} from './constants.ts';
import { digest, hashPagesOfChunks, pageCount, type HashType } from './digest.ts';
import { serializeSuperBlob, superBlobSize, type SuperBlobEntry } from './super-blob.ts';

/** A special-slot input: the file's bytes, or its digests precomputed per hash type. */
export type SlotInput = Uint8Array | { readonly sha1?: Uint8Array; readonly sha256?: Uint8Array };

export interface CodeDirectoryDigest {
  readonly hashType: HashType;
  /** Full (untruncated) digest of the CodeDirectory blob. */
  readonly digest: Buffer;
}

/** Produces the CMS blob content (DER SignedData) over the primary CodeDirectory. */
export interface CmsProducer {
  /** Upper bound of the DER size for CodeDirectories of these hash types (exact for RSA). */
  maxSize(hashTypes: readonly HashType[]): number;
  sign(primaryCodeDirectory: Buffer, codeDirectories: readonly CodeDirectoryDigest[]): Buffer;
}

export interface SliceSignPlan {
  hashTypes: readonly HashType[];
  identifier: string;
  teamId: string | undefined;
  pageSizeLog2: number;
  requirements: Buffer;
  /** Slot 5 and 7 blobs; only for main executables. */
  entitlements: { xml: Buffer; der: Buffer } | undefined;
  entitlementExecSegFlags: number;
  infoPlist: SlotInput | undefined;
  codeResources: SlotInput | undefined;
  /** undefined = ad-hoc (empty BlobWrapper in slot 0x10000). */
  cms: CmsProducer | undefined;
  /** 'apple': Apple codesign's size estimate (18000-byte CMS reserve); 'exact': the exact size. */
  reserve: 'apple' | 'exact';
  extraFlags: number;
  /** __LINKEDIT vmsize rounding; undefined = the CPU page size (thin files). */
  segmentAlignment: number | undefined;
}

export interface SignedSlice {
  /** The signed slice as consecutive chunks (mostly views of the input; see buildSliceChunks). */
  chunks: Buffer[];
  size: number;
  codeDirectories: CodeDirectoryDigest[];
}

/**
 * A slice whose new layout is fixed but whose pages are not hashed yet: what the signed slice
 * starts with, where the input's code ends, and how to finish once the page hashes are known.
 * signSlice hashes the code in memory; sign-stream.ts hashes it as it streams past.
 */
export interface PreparedSlice {
  /** Header and load commands of the signed slice: its bytes [0, head.length). */
  head: Buffer;
  /** The input's code ends here (an old signature is dropped); bytes [head.length, codeEnd) are kept. */
  codeEnd: number;
  /** Signature offset = CodeDirectory codeLimit; bytes [codeEnd, codeLimit) are zeros. */
  codeLimit: number;
  /** Size of the signed slice. */
  size: number;
  /** Code page size in bytes (0: the whole code is one page). */
  pageSize: number;
  hashTypes: readonly HashType[];
  /**
   * The slice's bytes from codeEnd on (zero gap, SuperBlob, zero padding), given the page hashes
   * of bytes [0, codeLimit) per hash type, in `hashTypes` order.
   */
  finish(codeHashes: readonly Buffer[]): { tail: Buffer; codeDirectories: CodeDirectoryDigest[] };
}

export function signSlice(slice: MachOSlice, plan: SliceSignPlan): SignedSlice {
  const prepared = prepareSlice(slice, plan);
  // Code = the new header, then the slice up to its old code end (old signature dropped); the
  // bytes up to the aligned signature start are zeros and belong to the code.
  const code = [prepared.head, slice.data.subarray(prepared.head.length, prepared.codeEnd), Buffer.alloc(prepared.codeLimit - prepared.codeEnd)].filter((c) => c.length > 0);
  const hashes = prepared.hashTypes.map((type) => hashPagesOfChunks(type, code, prepared.codeLimit, prepared.pageSize));
  const { tail, codeDirectories } = prepared.finish(hashes);
  const chunks = [...code.slice(0, prepared.codeLimit > prepared.codeEnd ? -1 : undefined), tail].filter((c) => c.length > 0);
  return { chunks, size: prepared.size, codeDirectories };
}

export function prepareSlice(slice: MachOSlice, plan: SliceSignPlan): PreparedSlice {
  const end = codeEnd(slice);
  const sigOff = align(end, SIGNATURE_ALIGNMENT);
  const pageSize = plan.pageSizeLog2 === 0 ? 0 : 2 ** plan.pageSizeLog2;
  const nCodeSlots = pageCount(sigOff, pageSize);
  const isExecutable = slice.header.filetype === MH_EXECUTE;

  // Special slots (cs_blobs.h): nSpecialSlots is the highest slot in use; unused ones below are zero.
  const specialInputs = new Map<number, (type: HashType) => Buffer>();
  if (plan.infoPlist) specialInputs.set(CSSLOT_INFOSLOT, slotDigest(plan.infoPlist, 'Info.plist'));
  specialInputs.set(CSSLOT_REQUIREMENTS, (type) => digest(type, plan.requirements));
  if (plan.codeResources) specialInputs.set(CSSLOT_RESOURCEDIR, slotDigest(plan.codeResources, 'CodeResources'));
  if (plan.entitlements) {
    const { xml, der } = plan.entitlements;
    specialInputs.set(CSSLOT_ENTITLEMENTS, (type) => digest(type, xml));
    specialInputs.set(CSSLOT_DER_ENTITLEMENTS, (type) => digest(type, der));
  }
  const nSpecial = Math.max(...specialInputs.keys());

  // execSeg: MachORep::execSegBase/Limit = __TEXT fileoff/filesize, only for binaries with a
  // platform; MAIN_BINARY iff MH_EXECUTE (signer.cpp); entitlement flags only where applied.
  const text = findSegment(slice, '__TEXT');
  const execSeg: ExecSegment | undefined =
    text && minimumOS(slice) && text.filesize > 0
      ? { base: text.fileoff, limit: text.filesize, flags: (isExecutable ? CS_EXECSEG_MAIN_BINARY : 0) | (plan.entitlements ? plan.entitlementExecSegFlags : 0) }
      : undefined;
  // CodeDirectory::Builder picks the lowest version that holds the fields in use.
  const version = execSeg ? CD_VERSION_EXECSEG : plan.teamId !== undefined ? CD_VERSION_TEAMID : CD_VERSION_SCATTER;

  const skeleton = (type: HashType): CodeDirectory => ({
    version,
    flags: (plan.cms ? 0 : CS_ADHOC) | plan.extraFlags,
    hashType: type,
    platform: 0,
    pageSizeLog2: plan.pageSizeLog2,
    identifier: plan.identifier,
    teamId: plan.teamId,
    codeLimit: sigOff,
    specialSlots: Array.from({ length: nSpecial }, () => Buffer.alloc(type.size)),
    codeHashes: Buffer.alloc(nCodeSlots * type.size),
    execSeg,
    extraHeader: Buffer.alloc(0),
  });

  // Signature space, fixed before anything is hashed (page 0 holds datasize).
  const fixedBlobs = [plan.requirements, ...(plan.entitlements ? [plan.entitlements.xml, plan.entitlements.der] : [])];
  const fixedLengths = fixedBlobs.map((b) => b.length);
  const exactSize = (): number => {
    const cdLengths = plan.hashTypes.map((t) => codeDirectorySize(skeleton(t)));
    const cmsLength = 8 + (plan.cms ? plan.cms.maxSize(plan.hashTypes) : 0); // BlobWrapper header + DER
    return superBlobSize([...fixedLengths, ...cdLengths, cmsLength]);
  };
  let space: number;
  if (plan.reserve === 'apple') {
    // Signer::signMachO sizes with CodeDirectory::Builder::size(currentVersion) — the 0x20500
    // header (96 bytes) for every directory — plus the fixed 18000-byte CMS reserve.
    const estimates = plan.hashTypes.map((t) => codeDirectorySize({ ...skeleton(t), version: CD_VERSION_RUNTIME }));
    space = superBlobSize([...fixedLengths, ...estimates, APPLE_CMS_RESERVE]);
    if (plan.cms) space = Math.max(space, exactSize());
  } else {
    space = exactSize();
  }
  space = align(space, SIGNATURE_ALIGNMENT);

  const edited = withSignatureSpace(slice, sigOff, space, plan.segmentAlignment);
  // The header (load commands) as re-serialised; every byte after it up to `end` is the input's.
  const head = buildSliceChunks(edited, { length: end })[0]!;

  const finish = (codeHashes: readonly Buffer[]): { tail: Buffer; codeDirectories: CodeDirectoryDigest[] } => {
    const directories = plan.hashTypes.map((type, i) => {
      const cd = skeleton(type);
      const hashes = codeHashes[i];
      if (hashes === undefined || hashes.length !== nCodeSlots * type.size) throw new Error(`internal: ${type.name} page hashes of the wrong length`);
      cd.codeHashes = hashes;
      for (const [slot, compute] of specialInputs) cd.specialSlots[slot - 1] = compute(type);
      const blob = serializeCodeDirectory(cd);
      return { blob, hashType: type, digest: codeDirectoryDigest(blob, type) };
    });
    const digests = directories.map(({ hashType, digest: d }) => ({ hashType, digest: d }));

    const entries: SuperBlobEntry[] = [{ type: CSSLOT_REQUIREMENTS, blob: plan.requirements }];
    directories.forEach((d, i) => entries.push({ type: i === 0 ? CSSLOT_CODEDIRECTORY : CSSLOT_ALTERNATE_CODEDIRECTORIES + i - 1, blob: d.blob }));
    if (plan.entitlements) {
      entries.push({ type: CSSLOT_ENTITLEMENTS, blob: plan.entitlements.xml });
      entries.push({ type: CSSLOT_DER_ENTITLEMENTS, blob: plan.entitlements.der });
    }
    const cms = plan.cms ? plan.cms.sign(directories[0]!.blob, digests) : Buffer.alloc(0);
    entries.push({ type: CSSLOT_SIGNATURESLOT, blob: wrapBlob(CSMAGIC_BLOBWRAPPER, cms) });
    const superBlob = serializeSuperBlob(entries);
    if (superBlob.length > space) {
      // Cannot happen: every length above is exact or an upper bound. Fail loudly if it ever does.
      throw new Error(`internal: signature of ${superBlob.length} bytes exceeds the reserved ${space}`);
    }
    // Zero gap up to the aligned signature start, the SuperBlob, zeros to the reserved size.
    const tail = Buffer.alloc(sigOff - end + space);
    superBlob.copy(tail, sigOff - end);
    return { tail, codeDirectories: digests };
  };
  return { head, codeEnd: end, codeLimit: sigOff, size: sigOff + space, pageSize, hashTypes: plan.hashTypes, finish };
}

function slotDigest(input: SlotInput, what: string): (type: HashType) => Buffer {
  if (input instanceof Uint8Array) return (type) => digest(type, input);
  return (type) => {
    const given = type.name === 'sha1' ? input.sha1 : type.name === 'sha256' ? input.sha256 : undefined;
    if (!given || given.length !== type.size) {
      throw new SigningError('code_signature_invalid', `No ${type.name} digest of ${what} was supplied for the ${type.name} CodeDirectory`);
    }
    return Buffer.from(given);
  };
}
