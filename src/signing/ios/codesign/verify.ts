// Verifies the embedded code signature of every slice of a Mach-O file, the checks of
// ios-signing.md §16: __LINKEDIT/LC_CODE_SIGNATURE layout, every CodeDirectory's page and special
// slot hashes, execSeg, requirements, XML vs DER entitlements, and the CMS (digest, CDHashes,
// CDHashes2, chain). Problems are collected per slice; nothing is thrown for a bad signature.
import { SigningError } from '../../errors.ts';
import type { PlistDict } from '../../plist/index.ts';
import { archName, MH_EXECUTE } from '../macho/constants.ts';
import { codeSignatureCommand, findSegment, minimumOS } from '../macho/inspect.ts';
import { parseMachO } from '../macho/parse.ts';
import type { MachOSlice } from '../macho/types.ts';
import { parseCodeDirectory, codeDirectoryDigest, type CodeDirectory } from './code-directory.ts';
import {
  CD_VERSION_EXECSEG, CSMAGIC_BLOBWRAPPER,
  CSSLOT_CODEDIRECTORY, CSSLOT_DER_ENTITLEMENTS, CSSLOT_ENTITLEMENTS, CSSLOT_INFOSLOT, CSSLOT_REQUIREMENTS,
  CSSLOT_RESOURCEDIR, CSSLOT_SIGNATURESLOT, CS_ADHOC, CS_EXECSEG_MAIN_BINARY, isCodeDirectorySlot, REQUIREMENT_DESIGNATED,
} from './constants.ts';
import { verifyCodeSignatureCms, type CmsReport } from './cms-verify.ts';
import { digest, hashPages, type HashType } from './digest.ts';
import { readEntitlements, sameEntitlements } from './entitlements.ts';
import { formatExpr, parseRequirements, type Expr } from './requirements.ts';
import { evaluateRequirement } from './requirement-eval.ts';
import { parseSuperBlob, type SuperBlobEntry } from './super-blob.ts';

export interface VerifyMachOOptions {
  /** Bytes of the bundle's Info.plist / _CodeSignature/CodeResources, to check special slots 1 and 3. */
  infoPlist?: Buffer;
  codeResources?: Buffer;
  /** DER roots the CMS chain must end in (default: any self-signed root). */
  trustedRoots?: readonly Buffer[];
  /**
   * The page hashes of the file's code, taken while it streamed past (resign/stream-code.ts),
   * when `input` is a stand-in holding only its real header and signature. Returning undefined
   * (hashes not taken for that type, page size or limit) hashes `input` itself instead.
   */
  pageHashes?: (type: HashType, codeLimit: number, pageSize: number) => Buffer | undefined;
}

export interface CodeDirectoryReport {
  slot: number;
  hashType: string;
  version: number;
  flags: number;
  pageSize: number;
  codeLimit: number;
  nSpecialSlots: number;
  nCodeSlots: number;
  cdhash: string;
  execSeg?: { base: number; limit: number; flags: number };
}

export interface SliceReport {
  arch: string;
  identifier?: string;
  teamId?: string;
  adhoc?: boolean;
  codeDirectories: CodeDirectoryReport[];
  designatedRequirement?: string;
  /** Whether the signing chain satisfies the designated requirement ('undecided': uses clauses not evaluated here). */
  designatedRequirementSatisfied?: boolean | 'undecided';
  entitlements?: PlistDict;
  cms?: Omit<CmsReport, 'certificates' | 'chainDer' | 'problems'>;
  /** Slots whose inputs were not supplied and so were not checked (1 Info.plist, 3 CodeResources). */
  unchecked: number[];
  problems: string[];
}

export interface VerifyReport {
  valid: boolean;
  slices: SliceReport[];
}

export function verifyMachO(input: Buffer, options: VerifyMachOOptions = {}): VerifyReport {
  const file = parseMachO(input);
  const slices = file.kind === 'thin' ? [file.slice] : file.slices;
  const reports = slices.map((slice) => verifySlice(slice, options));
  return { valid: reports.every((r) => r.problems.length === 0), slices: reports };
}

function verifySlice(slice: MachOSlice, options: VerifyMachOOptions): SliceReport {
  const report: SliceReport = { arch: archName(slice.header.cputype, slice.header.cpusubtype), codeDirectories: [], unchecked: [], problems: [] };
  const problem = (text: string): SliceReport => {
    report.problems.push(text);
    return report;
  };
  const command = codeSignatureCommand(slice);
  if (!command) return problem('no LC_CODE_SIGNATURE: the slice is unsigned');
  const linkedit = findSegment(slice, '__LINKEDIT');
  const sigEnd = command.dataoff + command.datasize;
  // ios-signing.md §4: the signature is the last thing in __LINKEDIT and in the slice.
  if (!linkedit || linkedit.fileoff + linkedit.filesize !== sigEnd) problem('__LINKEDIT does not end where the signature ends');
  if (sigEnd !== slice.data.length) problem('bytes follow the code signature');
  if (command.dataoff % 16 !== 0) problem('the signature is not 16-byte aligned (crashes on iOS 14)');

  let entries: SuperBlobEntry[];
  try {
    entries = parseSuperBlob(slice.data.subarray(command.dataoff, sigEnd));
  } catch (error) {
    return problem((error as Error).message);
  }
  const blob = (type: number): Buffer | undefined => entries.find((e) => e.type === type)?.blob;
  const cdEntries = entries.filter((e) => isCodeDirectorySlot(e.type));
  if (cdEntries[0]?.type !== CSSLOT_CODEDIRECTORY) return problem('no CodeDirectory in slot 0');

  const directories: Array<{ cd: CodeDirectory; blob: Buffer; digest: Buffer }> = [];
  for (const entry of cdEntries) {
    let cd: CodeDirectory;
    try {
      cd = parseCodeDirectory(entry.blob);
    } catch (error) {
      problem(`slot 0x${entry.type.toString(16)}: ${(error as Error).message}`);
      continue;
    }
    const d = codeDirectoryDigest(entry.blob, cd.hashType);
    directories.push({ cd, blob: entry.blob, digest: d });
    report.codeDirectories.push({
      slot: entry.type,
      hashType: cd.hashType.name,
      version: cd.version,
      flags: cd.flags,
      pageSize: cd.pageSizeLog2 === 0 ? 0 : 2 ** cd.pageSizeLog2,
      codeLimit: cd.codeLimit,
      nSpecialSlots: cd.specialSlots.length,
      nCodeSlots: cd.codeHashes.length / cd.hashType.size,
      cdhash: d.subarray(0, 20).toString('hex'),
      ...(cd.execSeg ? { execSeg: cd.execSeg } : {}),
    });
    checkDirectory(slice, cd, command.dataoff, blob, options, report);
  }
  const primary = directories[0];
  if (!primary) return report;
  report.identifier = primary.cd.identifier;
  if (primary.cd.teamId !== undefined) report.teamId = primary.cd.teamId;
  report.adhoc = (primary.cd.flags & CS_ADHOC) !== 0;
  for (const { cd } of directories.slice(1)) {
    if (cd.identifier !== primary.cd.identifier || cd.teamId !== primary.cd.teamId || cd.flags !== primary.cd.flags) {
      problem('alternate CodeDirectories disagree with the primary on identifier, team id or flags');
    }
  }

  // Requirements (slot 2): must parse; the designated requirement must name this identifier.
  const requirements = blob(CSSLOT_REQUIREMENTS);
  let designatedExpr: Expr | undefined;
  if (!requirements) problem('no requirements blob (slot 2)');
  else {
    try {
      const designated = parseRequirements(requirements).find((r) => r.type === REQUIREMENT_DESIGNATED);
      designatedExpr = designated?.expr;
      if (designated) {
        report.designatedRequirement = formatExpr(designated.expr);
        const ident = findIdent(designated.expr);
        if (ident !== undefined && ident !== primary.cd.identifier) problem(`designated requirement names "${ident}", not "${primary.cd.identifier}"`);
      } else if (!report.adhoc) problem('identity signature without a designated requirement');
    } catch (error) {
      problem((error as Error).message);
    }
  }

  // Entitlements: XML (slot 5) and DER (slot 7) must describe the same dictionary.
  try {
    const { xml, der } = readEntitlements(blob(CSSLOT_ENTITLEMENTS), blob(CSSLOT_DER_ENTITLEMENTS));
    if (xml) report.entitlements = xml;
    if (xml && der && !sameEntitlements(xml, der)) problem('DER entitlements differ from the XML entitlements');
    if (xml && !der && (minimumOS(slice)?.platform ?? 0) !== 1) problem('XML entitlements without DER entitlements (iOS 15+ rejects this, 0xe8008029)');
    if (der && !xml) problem('DER entitlements without XML entitlements');
  } catch (error) {
    problem(`entitlements: ${(error as Error).message}`);
  }

  // CMS (slot 0x10000): empty wrapper iff ad-hoc.
  const wrapper = blob(CSSLOT_SIGNATURESLOT);
  const cms = wrapper && wrapper.readUInt32BE(0) === CSMAGIC_BLOBWRAPPER ? wrapper.subarray(8) : undefined;
  if (wrapper && !cms) problem('slot 0x10000 is not a BlobWrapper');
  if (report.adhoc) {
    if (cms && cms.length > 0) problem('ad-hoc CodeDirectory but a non-empty CMS signature');
  } else if (!cms || cms.length === 0) {
    problem('CodeDirectory is not ad-hoc but there is no CMS signature');
  } else {
    const result = verifyCodeSignatureCms(
      cms,
      directories.map(({ cd, blob: b, digest: d }) => ({ blob: b, hashType: cd.hashType, digest: d })),
      options.trustedRoots,
    );
    const { certificates: _c, chainDer, problems, ...rest } = result;
    report.cms = rest;
    for (const p of problems) problem(`CMS: ${p}`);
    // reqinterp.cpp: the designated requirement must hold for this very signature.
    if (designatedExpr && problems.length === 0) {
      const verdict = evaluateRequirement(designatedExpr, { identifier: primary.cd.identifier, chain: chainDer });
      report.designatedRequirementSatisfied = verdict;
      if (verdict === false) problem('the signing certificate chain does not satisfy the designated requirement');
    }
  }
  return report;
}

function checkDirectory(
  slice: MachOSlice,
  cd: CodeDirectory,
  dataoff: number,
  blob: (type: number) => Buffer | undefined,
  options: VerifyMachOOptions,
  report: SliceReport,
): void {
  const name = cd.hashType.name;
  const problem = (text: string): void => void report.problems.push(`${name} CodeDirectory: ${text}`);
  if (cd.codeLimit !== dataoff) problem(`codeLimit ${cd.codeLimit} is not the signature offset ${dataoff}`);
  const pageSize = cd.pageSizeLog2 === 0 ? 0 : 2 ** cd.pageSizeLog2;
  if (cd.codeLimit <= slice.data.length) {
    const expected = options.pageHashes?.(cd.hashType, cd.codeLimit, pageSize) ?? hashPages(cd.hashType, slice.data, cd.codeLimit, pageSize);
    if (!expected.equals(cd.codeHashes)) {
      const size = cd.hashType.size;
      let page = 0;
      while (page * size < expected.length && expected.subarray(page * size, (page + 1) * size).equals(cd.codeHashes.subarray(page * size, (page + 1) * size))) page++;
      problem(`page ${page} hash does not match (of ${expected.length / size} pages)`);
    }
  }
  const specialBlob: Record<number, Buffer | undefined> = {
    [CSSLOT_REQUIREMENTS]: blob(CSSLOT_REQUIREMENTS),
    [CSSLOT_ENTITLEMENTS]: blob(CSSLOT_ENTITLEMENTS),
    [CSSLOT_DER_ENTITLEMENTS]: blob(CSSLOT_DER_ENTITLEMENTS),
    [CSSLOT_INFOSLOT]: options.infoPlist,
    [CSSLOT_RESOURCEDIR]: options.codeResources,
  };
  cd.specialSlots.forEach((stored, i) => {
    const slot = i + 1;
    const zero = stored.every((b) => b === 0);
    const input = specialBlob[slot];
    if (input) {
      if (!digest(cd.hashType, input).equals(stored)) problem(`special slot ${slot} hash does not match`);
    } else if (!zero) {
      if (slot === CSSLOT_INFOSLOT || slot === CSSLOT_RESOURCEDIR) {
        if (!report.unchecked.includes(slot)) report.unchecked.push(slot);
      } else if (slot === CSSLOT_REQUIREMENTS || slot === CSSLOT_ENTITLEMENTS || slot === CSSLOT_DER_ENTITLEMENTS) {
        problem(`special slot ${slot} is set but its blob is missing`);
      }
    }
  });
  for (const slot of [CSSLOT_REQUIREMENTS, CSSLOT_ENTITLEMENTS, CSSLOT_DER_ENTITLEMENTS]) {
    if (specialBlob[slot] && slot > cd.specialSlots.length) problem(`blob in slot ${slot} is not sealed by a special slot hash`);
  }
  // execSeg (cs_blobs.h, Apple MachORep::execSegBase/Limit): __TEXT of this slice.
  if (cd.version >= CD_VERSION_EXECSEG && cd.execSeg && cd.execSeg.limit !== 0) {
    const text = findSegment(slice, '__TEXT');
    if (!text || cd.execSeg.base !== text.fileoff || cd.execSeg.limit !== text.filesize) problem('execSeg base/limit do not match __TEXT');
    const main = (cd.execSeg.flags & CS_EXECSEG_MAIN_BINARY) !== 0;
    if (main !== (slice.header.filetype === MH_EXECUTE)) problem('execSeg MAIN_BINARY flag does not match the file type');
  }
}

function findIdent(expr: Expr): string | undefined {
  if (expr.op === 'ident') return expr.identifier;
  if (expr.op === 'and') return findIdent(expr.left) ?? findIdent(expr.right);
  return undefined;
}

/** Throws code_signature_invalid with the problems when the report is not valid. */
export function assertValid(report: VerifyReport): void {
  if (report.valid) return;
  const problems = report.slices.flatMap((s) => s.problems.map((p) => `${s.arch}: ${p}`));
  throw new SigningError('code_signature_invalid', `The code signature does not verify: ${problems.join('; ')}`, { details: { problems } });
}
