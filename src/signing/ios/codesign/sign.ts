// Public entry of the Mach-O signer: signMachO(bytes, options) → signed bytes. Pure: no I/O, no
// clock unless signingTime is omitted. Thin and fat files; every slice gets its own signature
// with one digest set for the whole file (Apple's rule), and fat files are re-laid out on each
// slice's alignment.
import { SigningError } from '../../errors.ts';
import type { PlistDict } from '../../plist/index.ts';
import { buildFatChunks } from '../macho/build.ts';
import { archName, MH_EXECUTE } from '../macho/constants.ts';
import { codeSignatureCommand, cryptId } from '../macho/inspect.ts';
import { parseMachO } from '../macho/parse.ts';
import type { MachOFile, MachOSlice } from '../macho/types.ts';
import { parseCodeDirectory } from './code-directory.ts';
import { CSSLOT_CODEDIRECTORY, CS_LINKER_SIGNED, REQUIREMENT_DESIGNATED } from './constants.ts';
import { HASH_SHA1, HASH_SHA256, type HashType } from './digest.ts';
import { entitlementsBlobs, execSegFlagsFor } from './entitlements.ts';
import { digestSet } from './hash-agility.ts';
import { defaultIdentifier } from './identifier.ts';
import { serializeRequirements, type Expr } from './requirements.ts';
import { signSlice, type CmsProducer, type CodeDirectoryDigest, type SliceSignPlan, type SlotInput } from './sign-slice.ts';
import { parseSuperBlob } from './super-blob.ts';

export type { CmsProducer, CodeDirectoryDigest, SlotInput } from './sign-slice.ts';

export interface SignMachOOptions {
  /**
   * How the CMS is produced. Omit for an ad-hoc signature. identity-signer.ts builds one from an
   * Identity (`identityCms`), which also supplies the team id and designated requirement.
   */
  signer?: CodeSigner;
  /** Signing identifier (CFBundleIdentifier for a bundle's main executable). */
  identifier?: string;
  /** File name, used for the default identifier when `identifier` is absent. */
  fileName?: string;
  /** Entitlements (slots 5 and 7); applied only when isMainExecutable. */
  entitlements?: PlistDict;
  /** Main executable of a bundle: carries entitlements and the bundle's special slots. Default: MH_EXECUTE. */
  isMainExecutable?: boolean;
  /** Code page size: 4096 (default, what Apple shipped through 2025) or 16384. */
  pageSize?: 4096 | 16384;
  /** Special slot 1 (Info.plist) and 3 (_CodeSignature/CodeResources) for a bundle's main executable. */
  specialSlotHashes?: { infoPlist?: SlotInput; codeResources?: SlotInput };
  /** Replaces the designated requirement (or pass `requirements` to replace the whole set blob). */
  designatedRequirement?: Expr;
  /** A complete Requirements set blob (0xfade0c01) to embed verbatim. */
  requirements?: Buffer;
  /** Override the digest set (default: Apple's agility rule from the slices' minimum OS). */
  digests?: ReadonlyArray<'sha1' | 'sha256'>;
  /** 'apple' reproduces codesign's signature-area size; 'exact' reserves only what is needed. */
  reserve?: 'apple' | 'exact';
  /** FairPlay-encrypted slices are refused unless this is set (the re-signed app would not run). */
  allowEncrypted?: boolean;
}

/** What an identity contributes to a signature (see identity-signer.ts). */
export interface CodeSigner {
  teamId: string | undefined;
  designatedRequirement(identifier: string): Expr;
  cms: CmsProducer;
}

export interface SignMachOResult {
  /**
   * The signed file as consecutive chunks — new headers and signatures, and views of the input
   * for the unchanged code — so a caller streaming into a zip never copies the whole binary.
   */
  chunks: Buffer[];
  size: number;
  /** The chunks joined into one Buffer (made on first access). */
  readonly bytes: Buffer;
  identifier: string;
  slices: Array<{ arch: string; codeDirectories: CodeDirectoryDigest[] }>;
  /** A thin file's header and load commands: the length of its first chunk (0 for a fat file). */
  headLength: number;
}

export function signMachO(input: Buffer, options: SignMachOOptions = {}): SignMachOResult {
  const { file, identifier, slices } = prepareMachO(input, options);
  const signed = (file.kind === 'thin' ? [file.slice] : file.slices).map((slice, i) => signSlice(slice, slices[i]!.plan));
  const chunks = file.kind === 'thin' ? signed[0]!.chunks : relayout(file, signed.map((s) => s.chunks));
  const size = chunks.reduce((n, c) => n + c.length, 0);
  let joined: Buffer | undefined;
  return {
    chunks,
    size,
    get bytes(): Buffer {
      joined ??= Buffer.concat(chunks, size);
      return joined;
    },
    identifier,
    slices: signed.map(({ codeDirectories }, i) => ({ arch: slices[i]!.arch, codeDirectories })),
    headLength: file.kind === 'thin' ? chunks[0]!.length : 0,
  };
}

/** What signMachO decides before hashing anything: shared with the streaming signer (sign-stream.ts). */
export interface PreparedMachO {
  file: MachOFile;
  identifier: string;
  slices: Array<{ arch: string; plan: SliceSignPlan }>;
}

export function prepareMachO(input: Buffer, options: SignMachOOptions): PreparedMachO {
  const file = parseMachO(input);
  const slices = file.kind === 'thin' ? [file.slice] : file.slices;
  for (const slice of slices) {
    if (!options.allowEncrypted && cryptId(slice) !== 0) {
      throw new SigningError('macho_unsupported', `The ${archName(slice.header.cputype, slice.header.cpusubtype)} slice is FairPlay-encrypted (cryptid ≠ 0); a re-signed copy would not launch`);
    }
  }
  const pageSize = options.pageSize ?? 4096;
  if (pageSize !== 4096 && pageSize !== 16384) throw new SigningError('code_signature_invalid', `Page size ${String(pageSize)} is not 4096 or 16384`);
  const adhoc = options.signer === undefined;
  const identifier = options.identifier ?? inheritedIdentifier(slices) ?? derivedIdentifier(options.fileName, slices[0]!, adhoc);
  if (identifier.length === 0 || identifier.includes('\0')) throw new SigningError('code_signature_invalid', 'The signing identifier is empty or contains NUL');
  const hashTypes: HashType[] = options.digests
    ? options.digests.map((name) => (name === 'sha1' ? HASH_SHA1 : HASH_SHA256))
    : digestSet(slices);
  if (hashTypes.length === 0) throw new SigningError('code_signature_invalid', 'At least one digest type is required');

  const requirements =
    options.requirements ??
    serializeRequirements(
      options.designatedRequirement
        ? [{ type: REQUIREMENT_DESIGNATED, expr: options.designatedRequirement }]
        : options.signer
          ? [{ type: REQUIREMENT_DESIGNATED, expr: options.signer.designatedRequirement(identifier) }]
          : [], // ad-hoc: Apple writes an empty set (`requirements=count=0 size=12`)
    );

  return {
    file,
    identifier,
    slices: slices.map((slice, index) => {
      const main = options.isMainExecutable ?? slice.header.filetype === MH_EXECUTE;
      const plan: SliceSignPlan = {
        hashTypes,
        identifier,
        teamId: options.signer?.teamId,
        pageSizeLog2: pageSize === 16384 ? 14 : 12,
        requirements,
        entitlements: main && options.entitlements ? entitlementsBlobs(options.entitlements) : undefined,
        entitlementExecSegFlags: main ? execSegFlagsFor(options.entitlements) : 0,
        infoPlist: main ? options.specialSlotHashes?.infoPlist : undefined,
        codeResources: main ? options.specialSlotHashes?.codeResources : undefined,
        cms: options.signer?.cms,
        reserve: options.reserve ?? (adhoc ? 'apple' : 'exact'),
        extraFlags: 0,
        segmentAlignment: file.kind === 'fat' ? 2 ** file.arches[index]!.align : undefined,
      };
      return { arch: archName(slice.header.cputype, slice.header.cpusubtype), plan };
    }),
  };
}

function relayout(file: Extract<MachOFile, { kind: 'fat' }>, slices: Buffer[][]): Buffer[] {
  // Offsets are recomputed (slices grew); each keeps its alignment, as codesign_allocate does.
  return buildFatChunks(file.fat64, file.arches.map((arch, i) => ({ arch: { ...arch, offset: undefined }, chunks: slices[i]! })));
}

/** The identifier of an existing signature (rcodesign "reconciles" it when re-signing). */
function inheritedIdentifier(slices: readonly MachOSlice[]): string | undefined {
  const command = codeSignatureCommand(slices[0]!);
  if (!command) return undefined;
  try {
    const entries = parseSuperBlob(slices[0]!.data.subarray(command.dataoff, command.dataoff + command.datasize));
    const cd = entries.find((e) => e.type === CSSLOT_CODEDIRECTORY);
    if (!cd) return undefined;
    const { identifier, flags } = parseCodeDirectory(cd.blob);
    // Linker signatures carry a placeholder identifier (`<name>-<hash>` from ld); do not keep it.
    return (flags & CS_LINKER_SIGNED) !== 0 ? undefined : identifier;
  } catch {
    return undefined; // a damaged old signature is replaced anyway
  }
}

function derivedIdentifier(fileName: string | undefined, first: MachOSlice, adhoc: boolean): string {
  if (fileName === undefined) {
    throw new SigningError('code_signature_invalid', 'No signing identifier: pass `identifier` (or `fileName` to derive one as codesign does)');
  }
  return defaultIdentifier(fileName, first, adhoc);
}
